// Recorded text never drives the operator's terminal: one neutraliser for every line the CLI prints.
import { describe, expect, it } from 'vitest';
import { createOutput, red } from '../../cli/output.js';
import { neutralise } from '../../cli/terminal-text.js';

describe('neutralise', () => {
  it.each([
    ['an OSC that retitles the terminal', '\u001b]0;pwned-title\u0007', '\\x1b]0;pwned-title\\x07'],
    ['a CSI that clears the screen', '\u001b[2J', '\\x1b[2J'],
    ['a fake red error', '\u001b[31mERROR-looking\u001b[0m', '\\x1b[31mERROR-looking\\x1b[0m'],
    ['a carriage return that would overwrite the line', 'ok\rFAILED', 'ok\\rFAILED'],
    ['NUL, backspace and DEL', 'a\u0000b\u0008c\u007f', 'a\\x00b\\x08c\\x7f'],
    ['a C1 CSI (U+009B)', 'x\u009b2Jy', 'x\\x9b2Jy'],
    ['a right-to-left override', 'evil\u202etxt.exe', 'evil\\u202etxt.exe'],
    ['bidi isolates and marks', '\u2066a\u2069\u200f\u061c', '\\u2066a\\u2069\\u200f\\u061c'],
    ['a line separator', 'a\u2028b', 'a\\u2028b'],
    ['the CLI’s own style marks, which recorded text may not carry', '\ue001red', '\\ue001red'],
  ])('shows %s visibly', (_what, text, shown) => {
    expect(neutralise(text)).toBe(shown);
  });

  it('keeps newlines and tabs in a block, and shows them in a one-line field', () => {
    expect(neutralise('a\tb\nc', { multiline: true })).toBe('a\tb\nc');
    expect(neutralise('a\tb\nc')).toBe('a\\tb\\nc');
  });

  it('leaves printable text of any script alone, and is idempotent', () => {
    const text = 'Pod ünïcödé 日本語 ✓ $(rm -rf /) \\x1b';
    expect(neutralise(text)).toBe(text);
    const once = neutralise('\u001b[2J\u202e');
    expect(neutralise(once)).toBe(once);
  });
});

describe('the output writer', () => {
  const capture = (tty: boolean, colors: boolean) => {
    const written: string[] = [];
    const out = createOutput({ write: (s) => (written.push(String(s)), true), isTTY: tty, hasColors: () => colors });
    return { out, written };
  };

  it('paints only a terminal that has colours, and neutralises what a line holds either way', () => {
    for (const [tty, colors, expected] of [
      [true, true, '\u001b[31mfailed\u001b[0m \\x1b[2J\n'],
      [true, false, 'failed \\x1b[2J\n'],
      [false, false, 'failed \\x1b[2J\n'],
    ] as const) {
      const { out, written } = capture(tty, colors);
      out.line(`${red('failed')} \u001b[2J`);
      expect(written.join('')).toBe(expected);
    }
  });

  it('writes raw output (JSON, a payload) byte for byte', () => {
    const { out, written } = capture(true, true);
    out.raw('{"stderr":"\u001b[2J"}\n');
    expect(written.join('')).toBe('{"stderr":"\u001b[2J"}\n');
  });
});
