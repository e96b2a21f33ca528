import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FINANCE_PAGE_DIR, loadFinancePage, scriptHash } from './finance-page.assets';

describe('finance page assets', () => {
  it('loads the page and its libraries, with a CSP that allows only the import map inline', () => {
    const bundle = loadFinancePage();
    expect([...bundle.page.keys()].sort()).toEqual([
      'api.js',
      'app.js',
      'audit.js',
      'charts.js',
      'format.js',
      'index.html',
      'operations.js',
      'style.css',
    ]);
    expect([...bundle.vendor.keys()].sort()).toEqual(['chart.umd.min.js', 'hooks.mjs', 'htm.mjs', 'preact.mjs']);

    const html = bundle.page.get('index.html')!.body.toString('utf8');
    const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(html)![1];
    expect(JSON.parse(importMap).imports).toEqual({
      preact: '/finance/vendor/preact.mjs',
      'preact/hooks': '/finance/vendor/hooks.mjs',
      htm: '/finance/vendor/htm.mjs',
    });
    expect(bundle.csp).toContain(`script-src 'self' '${scriptHash(importMap)}'`);
    expect(bundle.csp).toContain("default-src 'none'");
    expect(bundle.csp).toContain("connect-src 'self'");
    expect(bundle.csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    // No other inline script, and no script or style from another origin.
    expect(html.match(/<script\b/g)).toHaveLength(3);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('gives content types and strong ETags', () => {
    const bundle = loadFinancePage();
    expect(bundle.page.get('index.html')!.contentType).toBe('text/html; charset=utf-8');
    expect(bundle.page.get('style.css')!.contentType).toBe('text/css; charset=utf-8');
    expect(bundle.vendor.get('preact.mjs')!.contentType).toBe('text/javascript; charset=utf-8');
    expect(bundle.page.get('app.js')!.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
  });

  it('refuses to start without its files, naming the missing one', () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'finance-page-'));
    try {
      expect(() => loadFinancePage(empty)).toThrow(/Finance page: cannot read .*index\.html/);
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
    expect(FINANCE_PAGE_DIR).toBe(path.resolve(__dirname, '../../web/finance'));
  });
});
