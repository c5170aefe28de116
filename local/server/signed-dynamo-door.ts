import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';

// The local DynamoDB's only door. dynalite checks no signature and answers any origin (CORS `*`), so it listens on a
// Unix socket in a folder only this user can enter, and this server, on a loopback port, passes on only the
// requests signed (AWS Signature Version 4, as every AWS SDK signs) with the data folder's own credentials
// (local-dynamo.ts): another local user, or a web page in the user's browser, has no way in. It answers no CORS
// preflight and strips dynalite's CORS headers, so no page can read an answer either. A signature is checked as
// DynamoDB checks it: the SDK's own signer recomputes it over the signed headers and the body (a declared
// x-amz-content-sha256 must be the body's), and its time must be within 15 minutes of now.

export interface DoorCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface SignedDoor {
  endpoint: string;
  close(): Promise<void>;
}

/** The largest request body passed on: DynamoDB's own request limit is 16 MB. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
const MAX_SKEW_MS = 15 * 60_000;
const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([a-z0-9-]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

/** Serves `socketPath` (dynalite) on 127.0.0.1:`port` (0: any free port) to requests signed with `credentials`. */
export async function openSignedDoor(socketPath: string, credentials: DoorCredentials, port = 0): Promise<SignedDoor> {
  const server: Server = createServer((req, res) => {
    pass(req, res, socketPath, credentials).catch(() =>
      refuse(res, 500, 'InternalFailure', 'The local DynamoDB could not answer'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function pass(
  req: IncomingMessage,
  res: ServerResponse,
  socketPath: string,
  credentials: DoorCredentials,
): Promise<void> {
  if (req.method !== 'POST') return refuse(res, 403, 'AccessDeniedException', 'Only signed POST requests are served');
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) return refuse(res, 413, 'RequestEntityTooLarge', 'Request body too large');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return refuse(res, 413, 'RequestEntityTooLarge', 'Request body too large');
    chunks.push(chunk as Buffer);
  }
  const body = Buffer.concat(chunks);
  const problem = await sigV4Problem(req, body, credentials, 'dynamodb');
  if (problem) return refuse(res, 403, problem.type, problem.message);
  const forwarded = httpRequest(
    { socketPath, method: 'POST', path: req.url, headers: { ...req.headers, 'content-length': String(body.length) } },
    (answer) => {
      const headers = Object.fromEntries(
        Object.entries(answer.headers).filter(([name]) => !name.startsWith('access-control-')),
      );
      res.writeHead(answer.statusCode ?? 500, headers);
      answer.pipe(res);
    },
  );
  forwarded.once('error', () => refuse(res, 500, 'InternalFailure', 'The local DynamoDB could not answer'));
  forwarded.end(body);
}

/**
 * What is wrong with the request's AWS Signature Version 4 for `service`, as AWS names it; undefined when it is
 * signed with `credentials`. Used by every local stand-in that must admit only this user's processes (this door,
 * the Athena emulator).
 */
export async function sigV4Problem(
  req: IncomingMessage,
  body: Buffer,
  credentials: DoorCredentials,
  service: string,
): Promise<{ type: string; message: string } | undefined> {
  const match = AUTHORIZATION.exec(String(req.headers.authorization ?? ''));
  if (!match)
    return { type: 'MissingAuthenticationTokenException', message: 'Request is missing a valid Authentication Token' };
  const [, accessKeyId, , region, signedService, signedHeaderList, signature] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (signedService !== service)
    return {
      type: 'InvalidSignatureException',
      message: `Credential should be scoped to correct service: '${service}'.`,
    };
  if (accessKeyId !== credentials.accessKeyId)
    return { type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const at = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  const signingDate = at ? new Date(Date.UTC(+at[1]!, +at[2]! - 1, +at[3]!, +at[4]!, +at[5]!, +at[6]!)) : undefined;
  if (!signingDate || Math.abs(Date.now() - signingDate.getTime()) > MAX_SKEW_MS) {
    return { type: 'InvalidSignatureException', message: 'Signature expired or X-Amz-Date missing' };
  }
  // A declared payload hash is signed in place of the body: it must be the body's (the signer trusts it).
  const declaredHash = req.headers['x-amz-content-sha256'];
  if (declaredHash !== undefined && declaredHash !== createHash('sha256').update(body).digest('hex')) {
    return {
      type: 'InvalidSignatureException',
      message: 'The provided x-amz-content-sha256 header does not match what was computed.',
    };
  }
  const signedHeaders = signedHeaderList.split(';');
  const headers: Record<string, string> = {};
  for (const name of signedHeaders) {
    const value = req.headers[name];
    if (value === undefined) return { type: 'InvalidSignatureException', message: `Signed header ${name} is missing` };
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const url = new URL(req.url ?? '/', 'http://local');
  const signer = new SignatureV4({
    credentials,
    region,
    service,
    sha256: NodeSha256,
    uriEscapePath: true,
    applyChecksum: false,
  });
  const expected = await signer.sign(
    {
      method: req.method!,
      protocol: 'http:',
      hostname: headers.host?.split(':')[0] ?? '127.0.0.1',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body,
    },
    { signingDate, signingRegion: region, signingService: service, signableHeaders: new Set(signedHeaders) },
  );
  const recomputed =
    /Signature=([0-9a-f]{64})/.exec(
      String(expected.headers.authorization ?? expected.headers.Authorization ?? ''),
    )?.[1] ?? '';
  const same =
    recomputed.length === signature.length && timingSafeEqual(Buffer.from(recomputed), Buffer.from(signature));
  return same
    ? undefined
    : {
        type: 'InvalidSignatureException',
        message: 'The request signature we calculated does not match the signature you provided.',
      };
}

function refuse(res: ServerResponse, status: number, type: string, message: string): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', connection: 'close' });
  res.end(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message }));
}

/** SHA-256 and HMAC-SHA-256 as the signer asks for them (a hash when built without a secret, an HMAC with one). */
class NodeSha256 {
  private hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  private readonly secret: string | Uint8Array | undefined;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.secret = secret === undefined || typeof secret === 'string' ? secret : bytesOf(secret);
    this.hash = this.fresh();
  }
  private fresh() {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', this.secret);
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(typeof data === 'string' ? data : bytesOf(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

function bytesOf(data: ArrayBuffer | ArrayBufferView): Uint8Array {
  return data instanceof ArrayBuffer
    ? new Uint8Array(data)
    : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}
