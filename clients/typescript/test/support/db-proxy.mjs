// A TCP forwarder to Postgres that drops one connection at the moment the server answers a
// statement whose answer holds a marker: the server has done the work (an autocommitted insert
// is committed before its answer is sent) and the dev server never hears of it. The connection
// must be without TLS (`sslmode=disable`) for the marker to be seen.
import { connect, createServer } from "node:net";

/** Forward a free loopback port to the server of `databaseUrl`; `url` is the same URL through it, without TLS. */
export async function startDbProxy(databaseUrl) {
  const [credentials, rest] = databaseUrl.split(/@(.*)/s);
  const slash = rest.indexOf("/");
  const server = rest.slice(0, slash);
  const [host, port] = [server.slice(0, server.lastIndexOf(":")), Number(server.slice(server.lastIndexOf(":") + 1))];
  let marker = null;
  let repliesCut = 0;
  const sockets = new Set();
  const proxy = createServer((client) => {
    const upstream = connect(port, host);
    sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.on("data", (chunk) => upstream.write(chunk));
    let tail = Buffer.alloc(0);
    upstream.on("data", (chunk) => {
      const seen = Buffer.concat([tail, chunk]);
      if (marker !== null && seen.includes(marker)) {
        marker = null;
        repliesCut += 1;
        end();
        return;
      }
      client.write(chunk);
      tail = seen.subarray(Math.max(0, seen.length - 256));
    });
  });
  await new Promise((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const address = `127.0.0.1:${proxy.address().port}`;
  const path = rest.slice(slash);
  const url = `${credentials}@${address}${path}${path.includes("?") ? "&" : "?"}sslmode=disable`;
  return {
    url,
    /** Once: drop the connection whose answer holds `text`, instead of passing that answer on. */
    cutReplyContaining(text) {
      marker = Buffer.from(text);
    },
    get repliesCut() {
      return repliesCut;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => proxy.close(() => resolve()));
    },
  };
}
