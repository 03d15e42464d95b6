"""The loopback MCP tool server: a case's tools served to a team's own agent.

One server per run (:mod:`~zeroclaw_eval.toolserver.server`), a private route per
case attempt, speaking the Model Context Protocol over streamable HTTP
(:mod:`~zeroclaw_eval.toolserver.jsonrpc` holds the protocol, the server the HTTP).
A team's own MCP server, whose tools a run that talks to a model serves beside the
registered ones, is reached through the client of
:mod:`~zeroclaw_eval.toolserver.upstream`.
"""
