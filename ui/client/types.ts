/**
 * The API's contract types, imported from the server's own schemas (type-only: nothing of the server
 * reaches the bundle), so the web view reads exactly what the daemon sends, like the CLI does.
 */
export type {
  CacheEntry,
  CallDetail,
  CallPage,
  CallSummary,
  CallTree,
  Finding,
  FindingPage,
  Health,
  Helper,
  HelperSummary,
  NetworkReadinessView,
  ReadinessList,
  RuntimeStatusBody,
  SandboxRuntime,
  Payload,
  PodStory,
  Sandbox,
  TailGap,
  TailServerMessage,
  TracerStatus,
  SourceBody,
} from '../../api/index.js';
