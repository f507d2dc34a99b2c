// A client as Claude's Node.js apps are: child_process gives `serve` socket pairs, not pipes, for
// its stdin and stdout (libuv). Prints one JSON report on stdout. Usage: node node_stdio_client.js PYTHON
const { spawn } = require("child_process");

const server = spawn(process.argv[2], ["-m", "app", "serve", "--headless"], { stdio: ["pipe", "pipe", "pipe"] });
let buffer = "";
let stderr = "";
const waiting = new Map();
server.stderr.on("data", (data) => { stderr += data.toString(); });
server.stdout.on("data", (data) => {
  buffer += data.toString();
  let end;
  while ((end = buffer.indexOf("\n")) >= 0) {
    const message = JSON.parse(buffer.slice(0, end));
    buffer = buffer.slice(end + 1);
    if (waiting.has(message.id)) {
      waiting.get(message.id)(message);
      waiting.delete(message.id);
    }
  }
});
let next = 0;
function request(method, params) {
  next += 1;
  const id = next;
  server.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  return new Promise((resolve) => waiting.set(id, resolve));
}
async function run(command) {
  const answer = await request("tools/call", { name: "execute_command", arguments: { command } });
  return JSON.parse(answer.result.content[0].text);
}

(async () => {
  const hello = await request("initialize", {
    protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "node-client", version: "1.0" },
  });
  server.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  const long = await run(`: ${"a".repeat(90000)}; echo long`);  // a request line of about 90 kB
  const together = await Promise.all([1, 2, 3, 4, 5].map((n) => run(`sleep 0.$((5 - ${n})); echo ${n}`)));
  server.stdin.end();
  server.on("exit", (code) => {
    console.log(JSON.stringify({
      name: hello.result.serverInfo.name,
      long: long.stdout,
      together: together.map((result) => result.stdout.trim()),
      exit: code,
      stderr,
    }));
  });
})();
