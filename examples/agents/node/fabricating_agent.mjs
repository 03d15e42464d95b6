// The Node agent with a deliberate bug: it answers tool calls without running
// the tools, sending back a made-up "ok" instead of each tool's real result.
// Its suite must fail on the checks that grade what the tools returned.

import { makeAgent, serve } from "./agent.mjs";

await serve(makeAgent(() => "ok"));
