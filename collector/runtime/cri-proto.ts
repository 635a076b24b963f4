/**
 * The part of the CRI's `runtime.v1` API (kubernetes/cri-api,
 * pkg/apis/runtime/v1/api.proto) cnirec asks a runtime: Version, Status,
 * ListPodSandbox and PodSandboxStatus, all reads. Written by hand from the
 * CRI's own definitions, with its field numbers, and only the fields used:
 * a protobuf decoder skips the fields a message has beyond these, so a newer
 * runtime's answers decode the same. Kept as text, parsed once at start by
 * protobufjs: no generated code to keep in step, no file to ship beside dist/.
 */

import protobuf from 'protobufjs';

export const CRI_PACKAGE = 'runtime.v1';
/** The service path as gRPC names it: `/runtime.v1.RuntimeService/Status`. */
export const CRI_SERVICE = `${CRI_PACKAGE}.RuntimeService`;
/** The CRI before v1 (containerd 1.5 and older, CRI-O before 1.20): its Version has the same messages. */
export const CRI_V1ALPHA2_SERVICE = 'runtime.v1alpha2.RuntimeService';

export const CRI_PROTO = `
syntax = "proto3";
package runtime.v1;

service RuntimeService {
  rpc Version(VersionRequest) returns (VersionResponse) {}
  rpc PodSandboxStatus(PodSandboxStatusRequest) returns (PodSandboxStatusResponse) {}
  rpc ListPodSandbox(ListPodSandboxRequest) returns (ListPodSandboxResponse) {}
  rpc Status(StatusRequest) returns (StatusResponse) {}
}

message VersionRequest { string version = 1; }
message VersionResponse {
  string version = 1;
  string runtime_name = 2;
  string runtime_version = 3;
  string runtime_api_version = 4;
}

message PodSandboxMetadata {
  string name = 1;
  string uid = 2;
  string namespace = 3;
  uint32 attempt = 4;
}

enum PodSandboxState {
  SANDBOX_READY = 0;
  SANDBOX_NOTREADY = 1;
}

message PodSandboxStatusRequest {
  string pod_sandbox_id = 1;
  bool verbose = 2;
}
message PodIP { string ip = 1; }
message PodSandboxNetworkStatus {
  string ip = 1;
  repeated PodIP additional_ips = 2;
}
message PodSandboxStatus {
  string id = 1;
  PodSandboxMetadata metadata = 2;
  PodSandboxState state = 3;
  int64 created_at = 4;
  PodSandboxNetworkStatus network = 5;
  map<string, string> labels = 7;
  map<string, string> annotations = 8;
  string runtime_handler = 9;
}
message PodSandboxStatusResponse {
  PodSandboxStatus status = 1;
  map<string, string> info = 2;
}

message PodSandboxStateValue { PodSandboxState state = 1; }
message PodSandboxFilter {
  string id = 1;
  PodSandboxStateValue state = 2;
  map<string, string> label_selector = 3;
}
message ListPodSandboxRequest { PodSandboxFilter filter = 1; }
message PodSandbox {
  string id = 1;
  PodSandboxMetadata metadata = 2;
  PodSandboxState state = 3;
  int64 created_at = 4;
  map<string, string> labels = 5;
  map<string, string> annotations = 6;
  string runtime_handler = 7;
}
message ListPodSandboxResponse { repeated PodSandbox items = 1; }

message RuntimeCondition {
  string type = 1;
  bool status = 2;
  string reason = 3;
  string message = 4;
}
message RuntimeStatus { repeated RuntimeCondition conditions = 1; }
message StatusRequest { bool verbose = 1; }
message StatusResponse {
  RuntimeStatus status = 1;
  map<string, string> info = 2;
}
`;

let root: protobuf.Root | null = null;

/** The parsed messages, once. */
export function criRoot(): protobuf.Root {
  root ??= protobuf.parse(CRI_PROTO, { keepCase: true }).root;
  return root;
}

/** A message type of the subset, e.g. `StatusResponse`. */
export function criType(name: string): protobuf.Type {
  return criRoot().lookupType(`${CRI_PACKAGE}.${name}`);
}

/** Decoded as plain objects: 64-bit integers as decimal strings (nanoseconds exceed 2^53), enums by name, defaults filled. */
export const DECODE_OPTIONS: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, arrays: true, objects: true };
