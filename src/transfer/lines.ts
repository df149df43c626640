import { setImmediate as nextTurn } from 'node:timers/promises';

/** One line of an uploaded or read file. */
export interface FileLine {
  /** 1-based. */
  readonly number: number;
  /** The line without its end (`\n` or `\r\n`); undefined when it could not be read (see `problem`). */
  readonly text: string | undefined;
  readonly problem: string | undefined;
  /** Bytes of the file read up to the end of this line, for progress. */
  readonly bytesRead: number;
}

const NEWLINE = 0x0a;
/** A byte-order mark is dropped at the start of the file only. */
const FIRST_LINE = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
const LATER_LINES = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/**
 * Work done between turns of the event loop: lines, and bytes scanned. A 10 MB upload arrives as one chunk, and
 * its lines reach a reader that may store nothing (blank lines): without these pauses the whole file would be
 * split in one turn, and the server answer nothing else meanwhile (issue 38: 10 million blank lines, 25 s).
 */
const LINES_PER_TURN = 250;
const BYTES_PER_TURN = 64 * 1024;

/**
 * Splits a byte stream into lines without holding more than one line (at most `maxLineBytes`) in memory. A
 * longer line, or one that is not UTF-8, is reported by number and skipped; the rest of the file is still read.
 */
export async function* fileLines(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, maxLineBytes: number): AsyncGenerator<FileLine> {
  let parts: Buffer[] = [];
  let length = 0;
  let tooLong = false;
  let number = 0;
  let bytesRead = 0;
  let linesThisTurn = 0;
  let bytesThisTurn = 0;
  const pause = async () => {
    linesThisTurn = 0;
    bytesThisTurn = 0;
    await nextTurn();
  };

  const finish = (): FileLine => {
    number += 1;
    const bytes = Buffer.concat(parts, length);
    parts = [];
    length = 0;
    if (tooLong) {
      tooLong = false;
      return { number, text: undefined, problem: `longer than ${maxLineBytes} bytes`, bytesRead };
    }
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
    try {
      const text = (number === 1 ? FIRST_LINE : LATER_LINES).decode(bytes.subarray(0, end));
      return { number, text, problem: undefined, bytesRead };
    } catch {
      return { number, text: undefined, problem: 'not valid UTF-8', bytesRead };
    }
  };

  const keep = (chunk: Buffer) => {
    if (tooLong) return;
    if (length + chunk.length > maxLineBytes) {
      tooLong = true;
      parts = [];
      length = 0;
      return;
    }
    parts.push(chunk);
    length += chunk.length;
  };

  for await (const raw of source) {
    const chunk = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE, start); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      keep(chunk.subarray(start, end));
      bytesRead += end + 1 - start;
      bytesThisTurn += end + 1 - start;
      start = end + 1;
      yield finish();
      if (++linesThisTurn >= LINES_PER_TURN || bytesThisTurn >= BYTES_PER_TURN) await pause();
    }
    keep(chunk.subarray(start));
    bytesRead += chunk.length - start;
    bytesThisTurn += chunk.length - start;
    if (bytesThisTurn >= BYTES_PER_TURN) await pause();
  }
  if (length > 0 || tooLong) yield finish();
}
