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
const BYTE_ORDER_MARK = [0xef, 0xbb, 0xbf];

/**
 * The file cut into blocks of whole lines, so blocks can be decoded apart (on other threads): each `bytes` is
 * one or more lines, each ending in LF but perhaps the file's last. A line too long to keep whole comes as
 * `refused`, one line. A byte-order mark opening the file is dropped. The stream opens when iteration starts.
 */
export type LineBlock = { bytes: Uint8Array } | { refused: string };

export async function* readLineBlocks(
  file: string,
  onRead: (bytesRead: number) => void = () => {},
): AsyncGenerator<LineBlock> {
  const stream = createReadStream(file, { highWaterMark: 1 << 20 });
  // The unfinished line at the end of the last chunk, and whether it already passed MAX_LINE_BYTES.
  let carry: Buffer = Buffer.alloc(0);
  let tooLong = false;
  let first = true;
  try {
    for await (let chunk of stream as AsyncIterable<Buffer>) {
      onRead(stream.bytesRead);
      if (first && BYTE_ORDER_MARK.every((byte, i) => chunk[i] === byte)) chunk = chunk.subarray(3);
      first = false;
      let from = 0;
      if (tooLong) {
        const end = chunk.indexOf(0x0a);
        if (end === -1) continue;
        yield { refused: tooLongReason };
        tooLong = false;
        from = end + 1;
      }
      const lastEnd = chunk.lastIndexOf(0x0a);
      if (lastEnd >= from) {
        yield {
          bytes: carry.length
            ? Buffer.concat([carry, chunk.subarray(from, lastEnd + 1)])
            : chunk.subarray(from, lastEnd + 1),
        };
        carry = Buffer.alloc(0);
        from = lastEnd + 1;
      }
      if (from < chunk.length) carry = Buffer.concat([carry, chunk.subarray(from)]);
      if (carry.length > MAX_LINE_BYTES + 1) {
        carry = Buffer.alloc(0);
        tooLong = true;
      }
    }
    if (tooLong) yield { refused: tooLongReason };
    else if (carry.length) yield { bytes: carry };
  } finally {
    stream.destroy();
  }
}

const tooLongReason = `line longer than ${MAX_LINE_BYTES} bytes`;

/** The lines of a block: split on LF, a CR before it dropped, each decoded as strict UTF-8 and at most MAX_LINE_BYTES. */
export function linesOfBlock(block: LineBlock): (string | LineError)[] {
  if ('refused' in block) return [{ reason: block.refused }];
  const { bytes } = block;
  const lines: (string | LineError)[] = [];
  for (let from = 0; from < bytes.length;) {
    let end = bytes.indexOf(0x0a, from);
    if (end === -1) end = bytes.length;
    if (end - from > MAX_LINE_BYTES + 1) lines.push({ reason: tooLongReason });
    else {
      const last = end > from && bytes[end - 1] === 0x0d ? end - 1 : end;
      try {
        lines.push(utf8.decode(bytes.subarray(from, last)));
      } catch {
        lines.push({ reason: 'not valid UTF-8' });
      }
    }
    from = end + 1;
  }
  return lines;
}

/** The file's lines, one by one (readLineBlocks and linesOfBlock on this thread). */
export async function* readLines(
  file: string,
  onRead: (bytesRead: number) => void = () => {},
): AsyncGenerator<string | LineError> {
  for await (const block of readLineBlocks(file, onRead)) yield* linesOfBlock(block);
}

/** SHA-256 of the file's bytes, hex: the identity of an imported file (an import record's digest: writer/destination.ts). */
export async function fileDigest(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
