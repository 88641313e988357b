// Refuse every socket to a non-loopback address, and remember the attempt: imported first
// by every Node test file under tests/frameworks, so nothing a framework does can reach the internet unnoticed.
import net from "node:net";

export const attempts = [];

function loopback(host) {
  if (host === undefined || host === null || host === "localhost") return true;
  const bare = String(host).replace(/^\[|\]$/g, "");
  return net.isIPv4(bare) ? bare.startsWith("127.") : bare === "::1" || bare === "::ffff:127.0.0.1";
}

function target(args) {
  let [first, second] = args;
  if (Array.isArray(first)) [first, second] = first; // net.connect() passes its normalized arguments
  if (typeof first === "object" && first !== null) return first.path ? undefined : first.host;
  return typeof first === "number" || /^\d+$/.test(String(first)) ? second : undefined; // (port, host) or a pipe
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(...args) {
  const host = target(args);
  if (!loopback(host)) {
    attempts.push(String(host));
    throw new Error(`network guard: a test tried to reach ${host}`);
  }
  return connect.apply(this, args);
};
