/**
 * The CLI's two kinds of error, which decide its exit code: a usage error
 * (the command line is wrong: exit 2, and the command's usage is shown) and
 * a client error (the daemon is unreachable, refused the request or has no
 * such thing: exit 1). Each says one thing, once.
 */

export class UsageError extends Error {
  override readonly name = 'UsageError';
  /** The command's usage line, shown after the message. */
  constructor(
    message: string,
    readonly usage: string | null = null,
  ) {
    super(message);
  }
}

/** `--help` (or `-h`) after a command: its usage on stdout, exit 0. */
export class HelpRequested extends Error {
  override readonly name = 'HelpRequested';
  constructor(readonly usage: string) {
    super(usage);
  }
}

export class ClientError extends Error {
  override readonly name = 'ClientError';
}
