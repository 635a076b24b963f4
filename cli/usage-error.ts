/** A command line the CLI cannot run: one line on stderr, the usage text, exit status 2. */
export class UsageError extends Error {}
