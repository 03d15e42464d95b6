"""The notes agent of examples/agents/openai_sdk, unchanged, run as a command with a
real OpenTelemetry SDK and a real instrumentation of its ``openai`` client.

``TRACED_INSTRUMENTATION`` picks the instrumentation: ``openai-v2`` (the official
``opentelemetry-instrumentation-openai-v2``, GenAI conventions) or ``openinference``
(``openinference-instrumentation-openai``). Each span, as it ends, goes to the OTel
file exporter (OTLP JSON, one export request per line) at ``TRACE_FILE``: the
harness may end the process at the end of its case. The whole conversation is one
``invoke_agent`` span, as a team's agent opens one per request it serves.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from opentelemetry import trace
from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

NOTES_AGENT = Path(__file__).resolve().parents[2] / "examples" / "agents" / "openai_sdk"


def instrument() -> None:
    if os.environ["TRACED_INSTRUMENTATION"] == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor as Instrumentor
    else:
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as Instrumentor
    Instrumentor().instrument()


def main() -> int:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(os.environ["TRACE_FILE"])))
    trace.set_tracer_provider(provider)
    instrument()
    sys.path.insert(0, str(NOTES_AGENT))
    import notes_agent

    try:
        with trace.get_tracer("traced-notes-agent").start_as_current_span(
            "invoke_agent notes", attributes={"gen_ai.operation.name": "invoke_agent"}
        ):
            return notes_agent.main(notes_agent.NotesAgent)
    finally:
        provider.shutdown()  # flushes every span to the file before the process ends


if __name__ == "__main__":
    sys.exit(main())
