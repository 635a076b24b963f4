// What a plugin's environment says about its call: CNI_ARGS parsed as libcni parses it.
import { describe, expect, it } from 'vitest';
import { parseCniArgs, podFromCniArgs } from '../../collector/assemble/cni-env.js';

describe('CNI_ARGS', () => {
  it('trims keys and values, as libcni does', () => {
    expect(podFromCniArgs(' K8S_POD_NAMESPACE =ns ; K8S_POD_NAME= web-0 ;K8S_POD_UID=u ')).toEqual({ namespace: 'ns', name: 'web-0', uid: 'u', infraContainerId: null });
  });

  it('keeps an `=` inside a value and skips pairs without a key', () => {
    expect([...parseCniArgs('A=b=c;=x;;B')]).toEqual([['A', 'b=c']]);
  });
});
