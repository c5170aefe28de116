import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// An HTTP front for an S3-compatible server (moto's) that counts the requests passing through it by what S3 bills
// them as: LIST (a bucket listing), GET and HEAD of objects, and the rest. Path-style requests only, as Trino sends
// them to moto.

export interface S3RequestCounts {
  list: number;
  get: number;
  head: number;
  other: number;
}

export interface S3RequestCounter {
  /** The front's endpoint, to use in place of the server's. */
  endpoint: string;
  /** The counts since the last take, then zero again. */
  take(): S3RequestCounts;
  close(): Promise<void>;
}

export async function countS3Requests(target: string): Promise<S3RequestCounter> {
  const upstream = new URL(target);
  let counts: S3RequestCounts = { list: 0, get: 0, head: 0, other: 0 };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://front');
    const key = url.pathname.split('/').slice(2).join('/');
    if (req.method === 'GET' && key === '') counts.list += 1;
    else if (req.method === 'GET') counts.get += 1;
    else if (req.method === 'HEAD') counts.head += 1;
    else counts.other += 1;
    const forward = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    take: () => {
      const taken = counts;
      counts = { list: 0, get: 0, head: 0, other: 0 };
      return taken;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
