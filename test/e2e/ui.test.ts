/**
 * The web view in Debian's Chromium against the real daemon recording real plugin calls (bridge with
 * host-local in a network namespace, a plugin fed bytes that are not UTF-8, a plugin whose output and
 * pod name are HTML), with a token configured: what a person sees on each page, checked against the
 * bytes the calls really sent and what the API says. Screenshots go to test-results/.
 */

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMs } from '../../ui/model/format.js';
import { hexLines } from '../../ui/model/hex.js';
import { browserProblem, launchChromium, openPage, type WatchedPage } from './support/browser.js';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { ECHO, FIXTURE_PLUGINS } from './support/faults.js';
import { configBytes, createTestBridgeNetwork, withNetns, type Netns, type TestBridgeNetwork } from './support/netns.js';
import { CNI_BIN_DIR, execPlugin, podCniArgs, type ExecPluginResult } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';
import { pino } from 'pino';
import { createRedactor } from '../../collector/index.js';
import { defaultRedactionRules } from '../../collector/redact/redaction-rules.js';
import { serveBundle } from '../../daemon/index.js';

const RESULTS = path.resolve(import.meta.dirname, '../../test-results');
const TOKEN = 'ui-e2e-token-Zq81';
const HOSTILE = '<img src=x onerror=alert(1)></script>';
const HTML_PLUGIN = path.join(FIXTURE_PLUGINS, 'html.sh');

describe('the browser tests', () => {
  it("find Debian's Chromium", () => {
    // Never a skip: without a browser nothing of the web view is shown to work.
    expect(browserProblem()).toBeNull();
  });
});

const canRun = requirePrivilegedSuite() && browserProblem() === null;

interface Summary {
  id: string;
  command: string | null;
  plugin: string;
  parentId: string | null;
  containerId: string | null;
  durationMs: number | null;
  exitCode: number | null;
  ok: boolean | null;
}
interface Tree extends Summary {
  children: Tree[];
}
interface Story {
  sandboxes: { containerId: string | null; calls: Tree[] }[];
}

describe.runIf(canRun)('the web view of a recording daemon, in Chromium', () => {
  let daemon: RunningDaemon;
  let browser: Browser;
  let net: TestBridgeNetwork;
  let netns: Netns;
  const ns = `ui-e2e-${Date.now().toString(36)}`;
  const cid = (name: string) => `${ns}-${name}-0123456789abcdef`;
  let addStdin: Buffer;
  let binaryStdin: Buffer;
  const pages: WatchedPage[] = [];

  const api = async <T>(route: string): Promise<T> => {
    const res = await fetch(`${daemon.url}${route}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    if (!res.ok) throw new Error(`${route}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const addOf = async (containerId: string, plugin: string) => {
    const page = await api<{ items: Summary[] }>(`/api/v1/calls?containerId=${encodeURIComponent(containerId)}&plugin=${plugin}&command=ADD`);
    const call = page.items[0];
    if (!call) throw new Error(`no ${plugin} call of ${containerId}`);
    return call;
  };
  /** A tab holding the token, or (null) one that has never been given it. */
  const open = async (token: string | null = TOKEN) => {
    const watched = await openPage(browser, token ? { token } : {});
    pages.push(watched);
    return watched;
  };
  const goto = (page: Page, route: string) => page.goto(`${daemon.url}${route}`);
  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(RESULTS, name), fullPage: true });

  beforeAll(async () => {
    mkdirSync(RESULTS, { recursive: true });
    daemon = await startDaemon({ extraArgs: ['--token', TOKEN] });
    browser = await launchChromium();
    net = await createTestBridgeNetwork('cnirec-ui');
    netns = await withNetns('cnirec-ui');

    // web-0: a sandbox set up (bridge delegating to host-local) and torn down, and a second sandbox whose ADD fails.
    const web = (container: string, command: string, stdin: Buffer | string) =>
      execPlugin({ plugin: `${CNI_BIN_DIR}/bridge`, command, containerId: container, netns: netns.path, ifname: 'eth0', cniArgs: podCniArgs(ns, 'web-0', 'uid-web-0', container), stdin });
    addStdin = configBytes(net.config);
    expect((await web(cid('web'), 'ADD', addStdin)).exitCode).toBe(0);
    expect((await web(cid('web'), 'DEL', addStdin)).exitCode).toBe(0);
    const broken = configBytes({ ...net.config, ipam: { type: 'no-such-ipam' } });
    expect((await web(cid('web-b'), 'ADD', broken)).exitCode).not.toBe(0);

    // binary-0: a config that is not UTF-8, through the echo plugin.
    binaryStdin = Buffer.concat([Buffer.from('{"cniVersion":"1.0.0","name":"bin","type":"echo","blob":"'), Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28]), Buffer.from('"}')]);
    await execPlugin({ plugin: ECHO, cniPath: FIXTURE_PLUGINS, command: 'ADD', containerId: cid('bin'), netns: '/var/run/netns/none', ifname: 'eth0', cniArgs: podCniArgs(ns, 'binary-0', 'uid-bin', cid('bin')), stdin: binaryStdin });

    // A pod named, configured and answered in HTML.
    await execPlugin({
      plugin: HTML_PLUGIN,
      cniPath: FIXTURE_PLUGINS,
      command: 'ADD',
      containerId: cid('html'),
      netns: '/var/run/netns/none',
      ifname: 'eth0',
      cniArgs: podCniArgs(ns, HOSTILE, 'uid-html', cid('html')),
      stdin: JSON.stringify({ cniVersion: '1.0.0', name: HOSTILE, type: 'html' }),
    });

    await daemon.waitFor('the calls stored', (store) => (store.listCalls({ namespace: ns, status: 'finished' }, 100).items.length >= 7 ? true : null), 30_000);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await netns?.remove();
    await net?.cleanup();
    await daemon?.stop();
  });

  it('asks for the token and shows no data without it, then shows the calls once it is given', async () => {
    const { page } = await open(null);
    await goto(page, `/ui/calls?namespace=${ns}`);
    await page.getByRole('heading', { name: 'This daemon needs its API token' }).waitFor();
    expect(await page.locator('table').count()).toBe(0);
    expect(await page.locator('body').innerText()).not.toContain(ns);
    expect(page.url()).not.toContain(TOKEN);

    await page.getByLabel('Token', { exact: true }).fill(TOKEN);
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.locator(`tr.call-row`).first().waitFor();
    expect(await page.locator('table').innerText()).toContain(`${ns}/web-0`);
    expect(page.url()).not.toContain(TOKEN);
  });

  it('shows on the live tail a call made after the page loaded, within a second, with its exit code', async () => {
    const { page, problems } = await open();
    await goto(page, `/ui/tail?namespace=${ns}`);
    await page.locator('.tail-status[data-state="live"]').waitFor();
    const container = cid('tail');
    const result: ExecPluginResult = await execPlugin({
      plugin: ECHO,
      cniPath: FIXTURE_PLUGINS,
      command: 'ADD',
      containerId: container,
      netns: '/var/run/netns/none',
      ifname: 'eth0',
      cniArgs: podCniArgs(ns, 'tail-0', 'uid-tail', container),
      stdin: '{"cniVersion":"1.0.0","name":"tail","type":"echo"}',
    });
    const exited = Date.now();
    expect(result.exitCode).toBe(0);
    const row = page.locator(`tr.call-row:has(code[title="${container}"])`);
    await row.locator('.badge', { hasText: 'exit 0' }).waitFor({ timeout: 5000 });
    const seenAfterMs = Date.now() - exited;
    expect(await row.locator('td').nth(2).innerText()).toContain('echo.sh');
    expect(seenAfterMs, 'the finished call appears on the tail within a second of the plugin exiting').toBeLessThanOrEqual(1000);
    await shot(page, 'ui-tail.png');
    expect(problems).toEqual([]);
  });

  it('draws the pod story: bridge with host-local nested beneath, durations as the API says, the failed ADD marked', async () => {
    const story = await api<Story>(`/api/v1/pods/${ns}/web-0`);
    const { page, problems } = await open();
    await goto(page, `/ui/pods/${ns}/web-0`);
    await page.locator('.wf-row').first().waitFor();

    const rows = await page.locator('.wf-row').evaluateAll((els) =>
      els.map((el) => ({
        id: el.getAttribute('data-call-id'),
        kind: el.getAttribute('data-kind'),
        depth: Number(el.getAttribute('data-depth')),
        label: el.querySelector('.wf-label a, .wf-label .helper-name')?.textContent ?? '',
        duration: el.querySelector('.wf-duration')?.textContent ?? '',
        failed: el.classList.contains('failed'),
        outcome: el.querySelector('.wf-outcome')?.textContent ?? '',
      })),
    );
    const calls = rows.filter((r) => r.kind === 'call');
    const addAt = calls.findIndex((r) => r.label === 'ADD bridge');
    expect(addAt).toBeGreaterThanOrEqual(0);
    expect(calls[addAt]!.depth).toBe(0);
    expect(calls[addAt + 1]).toMatchObject({ label: 'ADD host-local', depth: 1 });

    // Every call the API lists is drawn, with its duration as the API gives it.
    const flat = (trees: Tree[]): Tree[] => trees.flatMap((t) => [t, ...flat(t.children)]);
    const apiCalls = story.sandboxes.flatMap((s) => flat(s.calls));
    expect(calls.map((r) => r.id).sort()).toEqual(apiCalls.map((c) => c.id).sort());
    for (const c of apiCalls) expect(calls.find((r) => r.id === c.id)!.duration, `${c.command} ${c.plugin}`).toBe(formatMs(c.durationMs));

    const failedAdd = apiCalls.find((c) => c.containerId === cid('web-b') && c.parentId === null)!;
    expect(failedAdd.ok).toBe(false);
    const failedRow = calls.find((r) => r.id === failedAdd.id)!;
    expect(failedRow.failed).toBe(true);
    expect(failedRow.outcome).toContain(`exit ${failedAdd.exitCode}`);
    await shot(page, 'ui-pod-story.png');
    expect(problems).toEqual([]);
  });

  it('shows a call in full: stdin exactly as sent, and bytes that are not UTF-8 in hex', async () => {
    const add = await addOf(cid('web'), 'bridge');
    const { page, problems } = await open();
    await goto(page, `/ui/calls/${add.id}`);
    const stdin = page.locator('[data-stream="stdin"]');
    await stdin.waitFor();
    await stdin.getByRole('button', { name: 'exact text' }).click();
    expect(await stdin.locator('pre[data-view="text"]').textContent()).toBe(addStdin.toString('utf8'));
    expect(await page.locator('[data-stream="stdout"] pre').textContent()).toContain('"ips"');
    await page.getByRole('link', { name: /ADD host-local/ }).waitFor();
    await shot(page, 'ui-call-detail.png');

    const binary = await addOf(cid('bin'), 'echo.sh');
    await goto(page, `/ui/calls/${binary.id}`);
    const hex = page.locator('[data-stream="stdin"] pre.hex');
    await hex.waitFor();
    expect(await page.locator('[data-stream="stdin"]').innerText()).toContain('not UTF-8: hex');
    const expected = hexLines(Uint8Array.from(binaryStdin)).map((l) => `${l.offset}  ${l.hex.padEnd(49)}  ${l.ascii}`);
    expect((await hex.textContent())!.split('\n')).toEqual(expected);
    expect(problems).toEqual([]);
  });

  it('shows the node status with the capture mode and its switch, and the findings page', async () => {
    const { page, problems } = await open();
    await goto(page, '/ui/status');
    await page.locator('[data-mode]').waitFor();
    expect(await page.locator('[data-mode]').textContent()).toBe('full');
    await page.getByRole('button', { name: 'Switch to light' }).waitFor();
    expect(await page.locator('.status-page').innerText()).toContain('recording');
    await goto(page, '/ui/findings');
    await page.getByRole('heading', { name: 'Findings' }).waitFor();
    await page.locator('.findings-page p.muted').first().waitFor();
    expect(problems).toEqual([]);
  });

  it('downloads a bundle of a pod from its page, which cnirec open serves with its banner and no live tail', async () => {
    const { page, problems } = await open();
    await goto(page, `/ui/pods/${ns}/web-0`);
    await page.locator('.wf-row').first().waitFor();
    const liveRows = await page.locator('.wf-row').count();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download bundle' }).click()]);
    const file = path.join(RESULTS, 'ui-pod-bundle.tar.gz');
    await download.saveAs(file);
    expect(download.suggestedFilename()).toMatch(new RegExp(`^cnirec-.+-${ns}_web-0-\\d{8}T\\d{6}Z\\.tar\\.gz$`));

    const served = await serveBundle(file, { listen: { host: '127.0.0.1', port: 0 }, token: null, log: pino({ level: 'silent' }), redactor: createRedactor(defaultRedactionRules()) });
    try {
      expect(served.manifest.filters.pods).toEqual([{ namespace: ns, name: 'web-0', uid: null }]);
      const bundled = await openPage(browser);
      pages.push(bundled);
      await bundled.page.goto(`${served.url}/ui/pods/${ns}/web-0`);
      await bundled.page.locator('.wf-row').first().waitFor();
      expect(await bundled.page.locator('.wf-row').count()).toBe(liveRows);
      const banner = await bundled.page.locator('.bundle-banner').innerText();
      expect(banner).toContain(`Bundle of node ${served.manifest.node}`);
      expect(banner).toContain('Not a live node');
      expect(await bundled.page.locator('nav.top').innerText()).not.toContain('Live tail');
      await shot(bundled.page, 'ui-bundle.png');
      expect(bundled.problems).toEqual([]);
    } finally {
      await served.close();
    }
    expect(problems).toEqual([]);
  });

  it('renders a pod name, config and stderr holding HTML as text, and runs none of it', async () => {
    const html = await addOf(cid('html'), 'html.sh');
    const { page, problems } = await open();
    await goto(page, `/ui/pods/${ns}/${encodeURIComponent(HOSTILE)}`);
    await page.locator('.wf-row').first().waitFor();
    expect(await page.locator('h2.pod-name').textContent()).toBe(`${ns}/${HOSTILE}`);

    await goto(page, `/ui/calls/${html.id}`);
    await page.locator('[data-stream="stderr"] pre').waitFor();
    expect(await page.locator('[data-stream="stderr"] pre').textContent()).toBe('<img src=x onerror=alert(1)></script><script>alert(2)</script>\n');
    expect(await page.locator('[data-stream="stdin"] pre').textContent()).toContain(HOSTILE);
    expect(await page.locator('body').innerText()).toContain(`${ns}/${HOSTILE}`);

    await goto(page, `/ui/tail?namespace=${ns}`);
    await page.locator('.tail-status[data-state="live"]').waitFor();
    await goto(page, `/ui/calls?namespace=${ns}&failed=true`);
    await page.locator('tr.call-row').first().waitFor();
    expect(await page.locator('tbody').innerText()).toContain('<img src=x onerror=alert(3)></script>');

    // Nothing of it became markup, and nothing ran.
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('script').count()).toBe(1);
    await page.waitForTimeout(300);
    expect(problems).toEqual([]);
  });
});
