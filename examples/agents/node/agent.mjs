// An agent written in JavaScript for Node 20: plain fetch, no dependencies.
//
// It speaks the OpenAI Chat Completions API to whatever OPENAI_BASE_URL names
// (with OPENAI_API_KEY), streaming each reply and reading the server-sent
// events itself, runs the tools the model asks for, sends their results back,
// and answers when the model does. Its tools:
//   echo   - returns its `message` argument, or "(empty)" when that is missing
//            or not a string;
//   sha256 - the hex SHA-256 of its `text` argument (UTF-8).
//
// It talks to its caller in JSON lines: one {"type": "turn", "turn": N,
// "user_input": "..."} line in on stdin, one {"type": "reply", "turn": N,
// "content": "..."} (or {"type": "error", ...}) line out on stdout. Logs go to
// stderr.

import { createHash } from "node:crypto";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const BASE_URL = (process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1").replace(/\/$/, "");
const API_KEY = process.env.OPENAI_API_KEY ?? "";
const MODEL = process.env.NODE_AGENT_MODEL ?? "gpt-4o-mini";
const MAX_ROUNDS = 10;

export const TOOLS = [
  {
    type: "function",
    function: {
      name: "echo",
      description: "Echo back the given message.",
      parameters: {
        type: "object",
        properties: { message: { type: "string" } },
        required: ["message"],
      },
    },
  },
  {
    type: "function",
    function: {
      name: "sha256",
      description: "The SHA-256 digest of a text, in hex.",
      parameters: {
        type: "object",
        properties: { text: { type: "string" } },
        required: ["text"],
      },
    },
  },
];

export const runners = {
  echo: (args) => (typeof args.message === "string" ? args.message : "(empty)"),
  sha256: (args) => {
    if (typeof args.text !== "string") throw new Error("text must be a string");
    return createHash("sha256").update(args.text, "utf8").digest("hex");
  },
};

// Runs one tool call the model asked for; a failure is text for the model.
export function runTool(call) {
  const run = runners[call.function.name];
  if (!run) return `unknown tool '${call.function.name}'`;
  try {
    const args = JSON.parse(call.function.arguments || "{}");
    return run(args && typeof args === "object" ? args : {});
  } catch (error) {
    return `${call.function.name} failed: ${error.message}`;
  }
}

// One model reply, streamed: server-sent events read off the response body,
// text and tool-call deltas put back together as they arrive.
async function complete(messages) {
  const response = await fetch(`${BASE_URL}/chat/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${API_KEY}` },
    body: JSON.stringify({ model: MODEL, messages, tools: TOOLS, stream: true }),
  });
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    throw new Error(`HTTP ${response.status}: ${body?.error?.message ?? "no error message"}`);
  }
  const message = { role: "assistant", content: "", tool_calls: [] };
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const bytes of response.body) {
    buffer += decoder.decode(bytes, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split("\n")) {
        if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
        for (const choice of JSON.parse(line.slice(6)).choices) {
          const delta = choice.delta ?? {};
          if (delta.content) message.content += delta.content;
          for (const piece of delta.tool_calls ?? []) {
            const call = (message.tool_calls[piece.index] ??= {
              id: "",
              type: "function",
              function: { name: "", arguments: "" },
            });
            if (piece.id) call.id = piece.id;
            call.function.name += piece.function?.name ?? "";
            call.function.arguments += piece.function?.arguments ?? "";
          }
        }
      }
    }
  }
  return message;
}

// One conversation; `toolRunner` turns a tool call into its result text.
export function makeAgent(toolRunner = runTool) {
  const history = [{ role: "system", content: "You are a helpful assistant." }];
  return async function runTurn(userInput) {
    history.push({ role: "user", content: userInput });
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const message = await complete(history);
      const calls = message.tool_calls;
      if (calls.length === 0) {
        const text = message.content;
        history.push({ role: "assistant", content: text });
        return text;
      }
      history.push({ role: "assistant", content: message.content || null, tool_calls: calls });
      for (const call of calls) {
        history.push({ role: "tool", tool_call_id: call.id, content: toolRunner(call) });
      }
    }
    throw new Error(`the model asked for tools ${MAX_ROUNDS} times in a row`);
  };
}

// The JSON-lines loop on stdin/stdout, one turn at a time.
export async function serve(runTurn) {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const request = JSON.parse(line);
    let reply;
    try {
      reply = { type: "reply", turn: request.turn, content: await runTurn(request.user_input) };
    } catch (error) {
      console.error(error);
      reply = { type: "error", turn: request.turn, message: String(error.message ?? error) };
    }
    process.stdout.write(JSON.stringify(reply) + "\n");
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  await serve(makeAgent());
}
