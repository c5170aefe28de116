import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

// Lines of an NDJSON file as the importer reads them: split on LF (a CR before it dropped), decoded as strict
// UTF-8, at most MAX_LINE_BYTES long. A line that breaks either rule is not guessed at: it comes back as a
// LineError, which the importer reports with its line number like any rejected line.

export const MAX_LINE_BYTES = 1024 * 1024;

export interface LineError {
  reason: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The file's lines; the stream opens when iteration starts, so a read error rejects the iteration. */
export async function* readLines(file: string, onRead: (bytesRead: number) => void = () => {}): AsyncGenerator<string | LineError> {
  const stream = createReadStream(file, { highWaterMark: 1 << 20 });
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let tooLong = false;
  const finish = (): string | LineError => {
    const bytes = Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    if (tooLong) {
      tooLong = false;
      return { reason: `line longer than ${MAX_LINE_BYTES} bytes` };
    }
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
    try {
      return utf8.decode(bytes.subarray(0, end));
    } catch {
      return { reason: 'not valid UTF-8' };
    }
  };
  const keep = (part: Buffer) => {
    if (tooLong) return;
    if (pendingBytes + part.length > MAX_LINE_BYTES + 1) {
      tooLong = true;
      pending = [];
      pendingBytes = 0;
      return;
    }
    pending.push(part);
    pendingBytes += part.length;
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      onRead(stream.bytesRead);
      let from = 0;
      for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, from)) {
        keep(chunk.subarray(from, at));
        yield finish();
        from = at + 1;
      }
      if (from < chunk.length) keep(Buffer.from(chunk.subarray(from)));
    }
    if (pendingBytes > 0 || tooLong) yield finish();
  } finally {
    stream.destroy();
  }
}

/** SHA-256 of the file's bytes, hex: the identity of an imported file (store/imports.ts). */
export async function fileDigest(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
