// An agent on the Vercel AI SDK (`ai`), with tools of its own or taken from an MCP server.
//
// The model is `@ai-sdk/openai-compatible`'s chat model (Chat Completions) at
// OPENAI_BASE_URL with OPENAI_API_KEY; each turn is one `generateText` call that runs
// the tools the model asks for and stops when it answers (`stopWhen:
// isStepCount(MAX_STEPS)`). Its own tools are `tool({ description, inputSchema,
// execute })` with zod schemas; served, its tools are those of `@ai-sdk/mcp`'s
// `createMCPClient` over streamable HTTP at ZEROCLAW_EVAL_MCP_URL. Its history across
// turns is the list of messages it keeps: each turn's `responseMessages` appended (in
// AI SDK 7 `response.messages` holds the last step's only: the answer, not the tool
// calls and results before it).
// Nothing here knows about zeroclaw-eval: pointed at a real endpoint, it is a real agent.
//
// It talks to its caller in JSON lines: one {"type": "turn", "turn": N, "user_input":
// "..."} line in on stdin, one {"type": "reply", "turn": N, "content": "..."} (or
// {"type": "error", ...}) line out on stdout. Logs go to stderr.
//
// `node agent.mjs [VARIANT]`: a variant name runs a deliberately broken agent (see
// VARIANTS below), each bug where the SDK lets an application change a tool call or
// the history: a wrapped `execute`, or the messages it keeps.

import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";

import { createMCPClient } from "@ai-sdk/mcp";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, isStepCount, tool } from "ai";
import { z } from "zod";

const MODEL = process.env.VERCEL_AI_AGENT_MODEL ?? "gpt-4o-mini";
const INSTRUCTIONS = "You are a helpful assistant. Use the tools when they help.";
const MAX_STEPS = 10;

const CITIES = {
  Paris: "Paris, France: population 2,102,650 (2023); mayor Anne Hidalgo",
  Tokyo: "Tokyo, Japan: population 14,192,184 (2024); governor Yuriko Koike",
  Lagos: "Lagos, Nigeria: population 15,388,000 (2023 estimate); governor Babajide Sanwo-Olu",
};

// The agent's own tools; the notes live in `workspace`.
export function ownTools(workspace) {
  return {
    echo: tool({
      description: "Echo back the given message.",
      inputSchema: z.object({ message: z.string().describe("The text to echo.") }),
      execute: async ({ message }) => message,
    }),
    add: tool({
      description: "Add two whole numbers.",
      inputSchema: z.object({
        a: z.number().int().describe("The first number."),
        b: z.number().int().describe("The second number."),
      }),
      execute: async ({ a, b }) => String(a + b),
    }),
    city_lookup: tool({
      description: "Look up a few facts about a city.",
      inputSchema: z.object({ city: z.string().describe("The city's name, e.g. Paris.") }),
      execute: async ({ city }) => {
        const fact = CITIES[city];
        // The SDK turns a thrown error into a tool-error result for the model.
        if (fact === undefined) throw new Error(`no such city: ${city}`);
        return fact;
      },
    }),
    write_note: tool({
      description: "Save a text note under a name.",
      inputSchema: z.object({
        name: z.string().describe("The note's name."),
        text: z.string().describe("What the note says."),
      }),
      execute: async ({ name, text }) => {
        await writeFile(join(workspace, `${name}.txt`), text, "utf8");
        return `saved note ${name}`;
      },
    }),
    read_note: tool({
      description: "Read a note saved earlier.",
      inputSchema: z.object({ name: z.string().describe("The note's name.") }),
      execute: async ({ name }) => {
        try {
          return await readFile(join(workspace, `${name}.txt`), "utf8");
        } catch {
          throw new Error(`no such note: ${name}`);
        }
      },
    }),
  };
}

// One conversation: the model, its tools, and the messages it keeps across turns.
export class Agent {
  constructor({ model, tools, keepHistory = true }) {
    this.model = model;
    this.tools = tools;
    this.keepHistory = keepHistory;
    this.messages = [];
  }

  async runTurn(userInput) {
    const messages = [...this.messages, { role: "user", content: userInput }];
    const result = await generateText({
      model: this.model,
      instructions: INSTRUCTIONS,
      messages,
      tools: this.tools,
      stopWhen: isStepCount(MAX_STEPS),
      maxRetries: 0, // a failed model call is the turn's error, never a second request
    });
    if (this.keepHistory) this.messages = [...messages, ...result.responseMessages];
    return result.text.trim();
  }
}

// --- Broken variants: each suite must fail, for the reason its bug gives. ---

// Each wraps every tool's `execute` (own or MCP), as an application wraps its tools.
function wrapExecute(tools, wrap) {
  return Object.fromEntries(
    Object.entries(tools).map(([name, t]) => [name, { ...t, execute: wrap(name, t.execute) }]),
  );
}

// The text of a result, whatever it is: a string (own tools) or an MCP `CallToolResult`.
function changeText(result, change) {
  if (typeof result === "string") return change(result);
  if (result && Array.isArray(result.content)) {
    return {
      ...result,
      content: result.content.map((block) =>
        block.type === "text" ? { ...block, text: change(block.text) } : block,
      ),
    };
  }
  return result;
}

const upper = (args) =>
  Object.fromEntries(
    Object.entries(args).map(([key, value]) => [
      key,
      typeof value === "string" ? value.toUpperCase() : value,
    ]),
  );

export const VARIANTS = {
  // Dispatches every string argument upper-cased.
  rewriting: (tools) =>
    wrapExecute(tools, (name, execute) => (args, options) => execute(upper(args), options)),
  // Tells the model that a failed tool succeeded.
  lying: (tools) =>
    wrapExecute(tools, (name, execute) => async (args, options) => {
      try {
        const result = await execute(args, options);
        return result?.isError ? { content: [{ type: "text", text: "ok, done" }] } : result;
      } catch {
        return "ok, done";
      }
    }),
  // Answers every call to `echo` itself, never dispatching it: it "knows" what echo
  // returns, and makes that result up.
  lazy: (tools) =>
    wrapExecute(tools, (name, execute) =>
      name === "echo" ? async (args) => String(args.message ?? "") : execute,
    ),
  // Appends a made-up note to every result.
  padding: (tools) =>
    wrapExecute(tools, (name, execute) => async (args, options) =>
      changeText(await execute(args, options), (text) => `${text} (cached fallback)`),
    ),
  // Keeps the first 16 characters of every result.
  truncating: (tools) =>
    wrapExecute(tools, (name, execute) => async (args, options) =>
      changeText(await execute(args, options), (text) => text.slice(0, 16)),
    ),
  // Forgets the earlier turns: the history it keeps is never added to.
  forgetful: null,
};

// The JSON-lines loop on stdin/stdout, one turn at a time.
async function serve(agent) {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const request = JSON.parse(line);
    let reply;
    try {
      reply = { type: "reply", turn: request.turn, content: await agent.runTurn(request.user_input) };
    } catch (error) {
      console.error(error);
      reply = { type: "error", turn: request.turn, message: String(error?.message ?? error) };
    }
    process.stdout.write(`${JSON.stringify(reply)}\n`);
  }
}

async function main(argv) {
  const variant = argv[0];
  if (variant !== undefined && !(variant in VARIANTS)) {
    console.error(`agent.mjs: no such variant ${JSON.stringify(variant)}`);
    process.exit(2);
  }
  const provider = createOpenAICompatible({
    name: "bridge",
    baseURL: process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
    apiKey: process.env.OPENAI_API_KEY,
  });
  const mcpUrl = process.env.ZEROCLAW_EVAL_MCP_URL;
  const mcp = mcpUrl ? await createMCPClient({ transport: { type: "http", url: mcpUrl } }) : null;
  try {
    let tools = mcp ? await mcp.tools() : ownTools(process.env.ZEROCLAW_EVAL_WORKSPACE ?? ".");
    if (VARIANTS[variant]) tools = VARIANTS[variant](tools);
    const agent = new Agent({
      model: provider.chatModel(MODEL),
      tools,
      keepHistory: variant !== "forgetful",
    });
    await serve(agent);
  } finally {
    await mcp?.close();
  }
}

await main(process.argv.slice(2));
