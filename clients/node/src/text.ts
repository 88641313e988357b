// Short texts for assertion messages, as the Python client writes them.
import type { ToolCall } from "./records.js";

const WIDTH = 160; // characters of any one text shown; the log keeps everything

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
