// What the CLIs echo of text they did not write (file names, rejected values, an owner read back) passes through
// here: a terminal interprets control characters (a newline that forges a line, an escape sequence that moves the
// cursor or rewrites the title) and bidirectional overrides (that reorder what is shown), so those are printed as
// `\uXXXX` escapes; everything else as it is.

// eslint-disable-next-line no-control-regex -- matching control characters is this module's purpose
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Whether `text` holds a character terminalSafe would escape. */
export function hasControlCharacters(text: string): boolean {
  return new RegExp(UNSAFE.source).test(text);
}
