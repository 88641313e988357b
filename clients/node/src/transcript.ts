// A session's log entries as a readable transcript, turn by turn, for failure messages.
// The same text as the Python client's (mockllm's transcript module): each request shows
// only what is new in it, then what mockllm answered.
import { type LogEntry, type LogResponse, type Message, type ToolCall } from "./records.js";

const WIDTH = 160; // characters of any one text shown; the log keeps everything

export function transcript(entries: readonly LogEntry[], session?: string | null): string {
  const name = session ?? entries.find((e) => e.session)?.session ?? "?";
  if (entries.length === 0) {
    return (
      `mockllm session '${name}': no model requests were logged ` +
      "(is the client's base URL the session's url(...)?)"
    );
  }
  const lines = [`mockllm session '${name}', ${plural(entries.length, "model request")}:`];
  entries.forEach((entry, i) => lines.push(...entryLines(i + 1, entry)));
  return lines.join("\n");
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

export function short(text: string, width = WIDTH): string {
  const flat = text.replaceAll("\n", "\\n");
  return flat.length <= width ? flat : flat.slice(0, width - 1) + "…";
}

export function callText(call: ToolCall): string {
  return `${call.name}(${short(call.arguments, 80)}) id=${call.id}`;
}

function entryLines(number: number, entry: LogEntry): string[] {
  const turn = entry.turn ?? "?";
  const offered = entry.tools.join(", ") || "none";
  const lines = [
    `  request ${number} (log seq ${entry.seq}) · turn ${turn} · ${entry.api} · ` +
      `scenario ${entry.scenario} · tools offered: ${offered}`,
  ];
  for (const message of newMessages(entry)) lines.push(...messageLines(message).map((l) => `       ${l}`));
  for (const f of [...entry.expectation_failures, ...entry.violations]) {
    lines.push(`     ! ${f.rule}: ${short(f.message)}`);
  }
  return [...lines, ...responseLines(entry.response, entry.server_error !== null)];
}

function newMessages(entry: LogEntry): Message[] {
  let last = -1;
  entry.conversation.forEach((m, i) => {
    if (m.role === "assistant") last = i;
  });
  return entry.conversation.slice(last + 1);
}

function messageLines(message: Message): string[] {
  if (message.tool_results.length > 0) {
    const lines = message.tool_results.map((r) => `tool result for ${r.call_id}: ${short(r.content)}`);
    return message.text ? [...lines, `${message.role}: ${short(message.text)}`] : lines;
  }
  return [`${message.role}: ${short(message.text)}`];
}

function responseLines(response: LogResponse | null, crashed: boolean): string[] {
  if (response === null) return ["     ← (no response yet)"];
  if (response.error) {
    const where = crashed ? " (traceback in the entry's server_error)" : "";
    const error = `${response.error.kind}: ${short(response.error.message ?? "")}`;
    return [`     ← error ${response.status} ${error}${where}`];
  }
  const said = response.text ? `: ${short(response.text)}` : "";
  return [
    `     ← assistant (${response.status}, ${response.finish})${said}`,
    ...response.tool_calls.map((c) => `       calls ${callText(c)}`),
  ];
}
