/**
 * The files of the finance page (`web/finance/`) and the browser libraries it imports (Preact,
 * htm, Chart.js from node_modules), read once at start into memory and served by name from a
 * fixed list: no path from the request ever reaches the file system.
 *
 * The page is plain ES modules with no build step. Its one inline script is the import map that
 * names the libraries; its SHA-256 goes into the Content-Security-Policy so that nothing else
 * inline, and nothing from another origin, can run.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** One servable file. */
export interface PageAsset {
  /** Name in the URL: `/finance/<name>` or `/finance/vendor/<name>`. */
  name: string;
  contentType: string;
  body: Buffer;
  /** Strong ETag (quoted SHA-256 prefix of the body). */
  etag: string;
}

/** Folder of the page's own sources: `web/finance` at the repository (or image) root. */
export const FINANCE_PAGE_DIR = path.resolve(__dirname, '..', '..', 'web', 'finance');

/** The page's own files, served at `/finance/<name>` (`index.html` also at `/finance`). */
const PAGE_FILES = [
  'index.html',
  'app.js',
  'api.js',
  'audit.js',
  'charts.js',
  'format.js',
  'operations.js',
  'style.css',
] as const;

/**
 * Browser libraries, served at `/finance/vendor/<name>`: the ESM builds of Preact and htm (named
 * in the page's import map) and Chart.js's self-contained UMD build (a classic script).
 */
function vendorFiles(): Record<string, string> {
  const dirOf = (specifier: string) => path.dirname(require.resolve(specifier));
  return {
    'preact.mjs': require.resolve('preact'),
    'hooks.mjs': require.resolve('preact/hooks'),
    'htm.mjs': path.join(dirOf('htm'), 'htm.mjs'),
    'chart.umd.min.js': path.join(dirOf('chart.js'), 'chart.umd.min.js'),
  };
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

const IMPORT_MAP = /<script type="importmap">([\s\S]*?)<\/script>/;

/**
 * The Content-Security-Policy of every finance page answer: same origin only, no inline code but
 * the import map (by hash), no framing, no plugins, forms and base URL pinned.
 */
export function contentSecurityPolicy(importMapHash: string): string {
  return [
    "default-src 'none'",
    `script-src 'self' '${importMapHash}'`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

/** CSP source expression (`sha256-…`) for the text of an inline script. */
export function scriptHash(text: string): string {
  return `sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}`;
}

function load(name: string, file: string): PageAsset {
  let body: Buffer;
  try {
    body = fs.readFileSync(file);
  } catch (error) {
    throw new Error(`Finance page: cannot read ${file} (${(error as Error).message})`, { cause: error });
  }
  return {
    name,
    contentType: CONTENT_TYPES[path.extname(name)] ?? 'application/octet-stream',
    body,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
  };
}

/** Everything the page needs, loaded and checked. */
export interface FinancePageBundle {
  page: ReadonlyMap<string, PageAsset>;
  vendor: ReadonlyMap<string, PageAsset>;
  csp: string;
}

/**
 * Reads the page and its libraries from disk.
 * @throws Error naming the file when one is missing, or when index.html has no import map.
 */
export function loadFinancePage(dir = FINANCE_PAGE_DIR): FinancePageBundle {
  const page = new Map(PAGE_FILES.map((name) => [name, load(name, path.join(dir, name))] as const));
  const vendor = new Map(Object.entries(vendorFiles()).map(([name, file]) => [name, load(name, file)] as const));
  const importMap = IMPORT_MAP.exec(page.get('index.html')!.body.toString('utf8'));
  if (!importMap) throw new Error(`Finance page: ${path.join(dir, 'index.html')} has no import map`);
  return { page, vendor, csp: contentSecurityPolicy(scriptHash(importMap[1])) };
}
