"""Traces in: a team's OpenTelemetry traces read as conversations with its model.

``zeroclaw eval import`` reads OTLP JSON (:mod:`~zeroclaw_eval.traces.otlp`), finds
the model calls and tool executions in it, whichever convention wrote them (the
OTel GenAI one, :mod:`~zeroclaw_eval.traces.genai`, or OpenInference,
:mod:`~zeroclaw_eval.traces.openinference`), and puts them together into one
conversation per trace or session (:mod:`~zeroclaw_eval.traces.conversation`).
No OpenTelemetry package is imported: the JSON is read as it is written.
"""
