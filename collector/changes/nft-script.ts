/**
 * An nft script (what `nft -f -` reads, or nft's argv joined, which nft
 * parses the same way) → the commands that change the ruleset, each as one
 * line nft itself would take: `add rule inet cni fwd iifname "cni0" accept`.
 * Pure and total: hostile or huge input gives what could be read and a
 * reason, never an exception.
 *
 * Commands end at a newline or `;` outside braces. The block form
 * (`table inet x { chain y { type filter hook input priority 0; tcp dport 22
 * accept } }`) is spelt out as the commands it stands for: `add table`,
 * `add chain … { type …; policy …; }`, `add rule …`, `add set …`,
 * `add element …`. Reads (`list`, `describe`, `monitor`, `export`, `get`)
 * and definitions (`define`) are not changes. A family left out is `ip`, as
 * nft takes it.
 */

import type { KernelChange } from '../types.js';

export interface NftCommand {
  readonly action: KernelChange['action'];
  /** The command as nft would take it, words single-spaced, with the family spelt out. */
  readonly subject: string;
}

export interface NftScript {
  readonly commands: NftCommand[];
  /** Why the script could not be read to its end (what came before is in `commands`). */
  readonly error: string | null;
  /** Commands past MAX_COMMANDS, counted and not listed. */
  readonly more: number;
}

/** Commands listed at most: a plugin's script holds tens; past this is a flood, counted. */
export const MAX_COMMANDS = 500;
/** Braces nested deeper than nft scripts go (set literals in a chain in a table: 4). */
const MAX_DEPTH = 16;
/** One subject's length at most: a set of 10 000 elements reads as its beginning. */
const MAX_SUBJECT = 1000;

const ACTIONS: Readonly<Record<string, KernelChange['action']>> = {
  add: 'add',
  create: 'add',
  insert: 'add',
  delete: 'delete',
  destroy: 'delete',
  flush: 'delete',
  replace: 'change',
  rename: 'change',
  reset: 'change',
};
const READS = new Set(['list', 'describe', 'monitor', 'export', 'get', 'define', 'redefine', 'undefine']);
const FAMILIES = new Set(['ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev']);
/** Objects named by family and table (and more after): the family is spelt out when left out. */
const OBJECTS = new Set(['table', 'chain', 'rule', 'set', 'map', 'element', 'flowtable', 'counter', 'quota', 'limit', 'secmark', 'synproxy', 'ct']);
/** Statements of a chain block that describe the chain itself, not rules. */
const CHAIN_PROPERTIES = new Set(['type', 'policy', 'comment', 'devices', 'device']);
/** Statements of a set or map block that describe it; `elements = { … }` are its elements. */
const SET_PROPERTIES = new Set(['type', 'typeof', 'flags', 'timeout', 'gc-interval', 'size', 'policy', 'auto-merge', 'comment', 'counter']);

type Item = string | Block;
interface Block {
  readonly statements: Item[][];
}
type Statement = Item[];

export function parseNftScript(script: string): NftScript {
  const commands: NftCommand[] = [];
  let more = 0;
  const emit = (action: KernelChange['action'], words: readonly Item[]) => {
    if (commands.length >= MAX_COMMANDS) {
      more++;
      return;
    }
    const subject = render(words);
    commands.push({ action, subject: subject.length > MAX_SUBJECT ? `${subject.slice(0, MAX_SUBJECT)}…` : subject });
  };
  const { statements, error } = parse(script);
  for (const st of statements) command(st, emit);
  return { commands, error, more };
}

type Emit = (action: KernelChange['action'], words: readonly Item[]) => void;

function command(st: Statement, emit: Emit): void {
  const first = st[0];
  if (typeof first !== 'string') return;
  const verb = first.toLowerCase();
  if (READS.has(verb)) return;
  // `table inet x { … }` alone: nft's implicit add.
  const action = ACTIONS[verb] ?? (verb === 'table' || verb === 'chain' ? 'add' : undefined);
  if (action === undefined) {
    // include (a file not taken) and anything nft would refuse: told as it was written.
    emit('change', st);
    return;
  }
  const rest = verb in ACTIONS ? st.slice(1) : st;
  const verbWord = verb in ACTIONS ? verb : 'add';
  const object = typeof rest[0] === 'string' ? rest[0].toLowerCase() : '';
  if (!OBJECTS.has(object)) {
    // `flush ruleset`, `add inet x y …` (a rule without the word): as written.
    emit(action, [verbWord, ...rest]);
    return;
  }
  const objectWords = object === 'ct' ? 2 : 1;
  const spec = withFamily(rest, objectWords);
  const block = spec.at(-1);
  if (block !== undefined && typeof block !== 'string' && (object === 'table' || object === 'chain') && verbWord !== 'delete' && verbWord !== 'destroy') {
    const head = spec.slice(0, -1);
    if (object === 'table') tableBlock(verbWord, action, head, block, emit);
    else chainBlock(verbWord, action, head, block, emit);
    return;
  }
  emit(action, [verbWord, ...spec]);
}

/** `table <family> <name> { … }`: the table, then what its block declares. */
function tableBlock(verb: string, action: KernelChange['action'], head: Item[], block: Block, emit: Emit): void {
  emit(action, [verb, ...head]);
  const family = head[1]!;
  const table = head[2];
  if (typeof table !== 'string') return;
  for (const st of block.statements) {
    const kind = typeof st[0] === 'string' ? st[0].toLowerCase() : '';
    if (kind === 'chain' && typeof st[1] === 'string') {
      const body = st[2];
      chainBlock('add', 'add', ['chain', family, table, st[1]], typeof body === 'object' ? body : { statements: [] }, emit);
    } else if ((kind === 'set' || kind === 'map') && typeof st[1] === 'string') {
      const body = st[2];
      setBlock(kind, family, table, st[1], typeof body === 'object' ? body : { statements: [] }, emit);
    } else if (OBJECTS.has(kind) && kind !== 'table') {
      // flowtable, counter, quota, limit, ct helper…: declared whole.
      emit('add', ['add', st[0]!, ...(kind === 'ct' ? [st[1]!] : []), family, table, ...st.slice(kind === 'ct' ? 2 : 1)]);
    }
    // `flags dormant`, `comment "…"`: the table's own settings, part of its add.
  }
}

/** `chain <family> <table> <name> { properties; rules }`: the chain with its properties, then each rule. */
function chainBlock(verb: string, action: KernelChange['action'], head: Item[], block: Block, emit: Emit): void {
  const properties = block.statements.filter((st) => typeof st[0] === 'string' && CHAIN_PROPERTIES.has(st[0].toLowerCase()));
  const rules = block.statements.filter((st) => !properties.includes(st));
  emit(action, [verb, ...head, ...(properties.length > 0 ? [{ statements: properties }] : [])]);
  for (const rule of rules) emit('add', ['add', 'rule', ...head.slice(1), ...rule]);
}

function setBlock(kind: string, family: Item, table: string, name: string, block: Block, emit: Emit): void {
  const properties = block.statements.filter((st) => typeof st[0] === 'string' && SET_PROPERTIES.has(st[0].toLowerCase()));
  emit('add', ['add', kind, family, table, name, ...(properties.length > 0 ? [{ statements: properties }] : [])]);
  for (const st of block.statements) {
    if (st[0] !== 'elements') continue;
    const elements = st.find((x): x is Block => typeof x !== 'string');
    if (elements) emit('add', ['add', 'element', family, table, name, elements]);
  }
}

/** The object's words with the family spelt out after them (nft takes a missing one as `ip`). */
function withFamily(rest: Item[], objectWords: number): Item[] {
  const object = rest.slice(0, objectWords);
  const after = rest.slice(objectWords);
  if (object[0] === 'ruleset') return rest;
  const family = after[0];
  if (typeof family === 'string' && FAMILIES.has(family.toLowerCase())) return [...object, family.toLowerCase(), ...after.slice(1)];
  return [...object, 'ip', ...after];
}

function render(words: readonly Item[]): string {
  return words.map((w) => (typeof w === 'string' ? w : w.statements.length === 0 ? '{ }' : `{ ${w.statements.map((st) => render(st)).join('; ')}${isDeclaration(w) ? ';' : ''} }`)).join(' ');
}

/** A block of chain or set properties reads as nft lists it: each ended by `;`. */
function isDeclaration(b: Block): boolean {
  return b.statements.every((st) => typeof st[0] === 'string' && (CHAIN_PROPERTIES.has(st[0]) || SET_PROPERTIES.has(st[0])));
}

/**
 * Statements of blocks of words. A statement ends at a newline or `;`; a
 * block at its `}`. Comments (`#` to the end of the line) and line
 * continuations (`\` before a newline) go; strings keep their quotes. A
 * fault ends the reading: the statements before it are kept.
 */
function parse(text: string): { statements: Statement[]; error: string | null } {
  const root: Statement[] = [];
  const stack: Array<{ statements: Statement[]; current: Statement }> = [{ statements: root, current: [] }];
  const end = () => {
    const top = stack.at(-1)!;
    if (top.current.length > 0) top.statements.push(top.current);
    top.current = [];
  };
  let error: string | null = null;
  let i = 0;
  let line = 1;
  while (error === null && i < text.length) {
    const c = text[i]!;
    const current = stack.at(-1)!.current;
    if (c === '\n') {
      line++;
      // A list cut over lines (`{ 22,` newline `80 }`) goes on.
      const last = current.at(-1);
      if (!(typeof last === 'string' && last.endsWith(','))) end();
      i++;
    } else if (c === ';') {
      end();
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r') {
      i++;
    } else if (c === '\\' && text[i + 1] === '\n') {
      i += 2;
      line++;
    } else if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '{') {
      if (stack.length > MAX_DEPTH) {
        error = `braces nested deeper than ${MAX_DEPTH} (line ${line})`;
        break;
      }
      const block: Block = { statements: [] };
      current.push(block);
      stack.push({ statements: block.statements, current: [] });
      i++;
    } else if (c === '}') {
      if (stack.length === 1) {
        error = `a } closes nothing (line ${line})`;
        break;
      }
      end();
      stack.pop();
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"' && text[j] !== '\n') j++;
      if (text[j] !== '"') {
        error = `a string is not closed (line ${line})`;
        break;
      }
      current.push(text.slice(i, j + 1));
      i = j + 1;
    } else {
      let j = i;
      while (j < text.length && !WORD_END.has(text[j]!)) j++;
      current.push(text.slice(i, j));
      i = j;
    }
  }
  if (error === null && stack.length > 1) error = `${stack.length - 1} block(s) not closed at the end`;
  // What came before a fault still tells, but only the statements closed at the top: a half-read block says nothing sure.
  stack.length = 1;
  if (error === null) end();
  return { statements: root, error };
}

const WORD_END = new Set([' ', '\t', '\r', '\n', ';', '{', '}', '"', '#']);
