/**
 * The README is the front door and `docs/` holds the rest: this keeps the README short, every docs
 * page reachable from it, and every relative link (and `#anchor`) in them pointing somewhere real.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SCOPES } from '../src/auth/scopes';

const ROOT = path.resolve(__dirname, '..');
const README = path.join(ROOT, 'README.md');
const DOCS = path.join(ROOT, 'docs');
const README_MAX_LINES = 150;

interface Link {
  file: string;
  line: number;
  target: string;
}

/** Markdown lines with fenced code blocks blanked out (line numbers kept). */
function unfenced(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

/** Markdown lines with fenced code blocks and inline code blanked out (line numbers kept). */
function prose(markdown: string): string[] {
  return unfenced(markdown).map((line) => line.replace(/`[^`]*`/g, ''));
}

/** Inline links `[text](target)`, images included, and reference definitions `[id]: target`. */
function linksOf(file: string): Link[] {
  const links: Link[] = [];
  prose(fs.readFileSync(file, 'utf8')).forEach((text, i) => {
    for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ file, line: i + 1, target: m[1] });
    }
    const ref = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(text);
    if (ref) links.push({ file, line: i + 1, target: ref[1] });
  });
  return links;
}

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target);

/**
 * GitHub's heading anchors: lower case, punctuation dropped (letters, digits, spaces, `-` and `_`
 * kept), spaces to `-`, and `-1`, `-2`… appended to repeats.
 */
export function headingSlugs(markdown: string): Set<string> {
  const slugs = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of unfenced(markdown)) {
    const m = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line.replace(/`([^`]*)`/g, '$1'));
    if (!m) continue;
    const base = m[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    slugs.add(n === 0 ? base : `${base}-${n}`);
  }
  return slugs;
}

const docsPages = fs
  .readdirSync(DOCS)
  .filter((name) => name.endsWith('.md'))
  .sort();
const markdownFiles = [README, ...docsPages.map((name) => path.join(DOCS, name))];
const rel = (file: string): string => path.relative(ROOT, file);

describe('README and docs/', () => {
  it('makes anchors the way GitHub does', () => {
    expect([...headingSlugs('# Wallet gateway\n## What `npm start` does\n## Tests\n## Tests\n')]).toEqual([
      'wallet-gateway',
      'what-npm-start-does',
      'tests',
      'tests-1',
    ]);
    expect([...headingSlugs('```\n# not a heading\n```\n### Cards: routes & scopes\n')]).toEqual([
      'cards-routes--scopes',
    ]);
  });

  it(`keeps the README at most ${README_MAX_LINES} lines`, () => {
    const lines = fs.readFileSync(README, 'utf8').replace(/\n$/, '').split('\n');
    expect(lines.length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('links every docs page from the README', () => {
    expect(docsPages.length).toBeGreaterThan(0);
    const linked = new Set(
      linksOf(README)
        .filter((link) => !isExternal(link.target))
        .map((link) => path.resolve(ROOT, decodeURIComponent(link.target.split('#')[0]))),
    );
    const unlinked = docsPages.filter((name) => !linked.has(path.join(DOCS, name)));
    expect(unlinked).toEqual([]);
  });

  it('starts every docs page with a title and one line saying what it covers', () => {
    const bad = docsPages.filter((name) => {
      const [title, blank, summary, after] = fs.readFileSync(path.join(DOCS, name), 'utf8').split('\n');
      return !/^# \S/.test(title) || blank !== '' || !/^[^\s#|`>-]/.test(summary ?? '') || (after ?? '') !== '';
    });
    expect(bad).toEqual([]);
  });

  it('points every relative link and #anchor at a file and heading that exist', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of markdownFiles) {
      for (const link of linksOf(file)) {
        if (isExternal(link.target)) continue;
        checked++;
        const [pathPart, anchor] = link.target.split('#', 2);
        const target = pathPart ? path.resolve(path.dirname(file), decodeURIComponent(pathPart)) : file;
        const where = `${rel(file)}:${link.line} → ${link.target}`;
        if (!fs.existsSync(target)) {
          broken.push(`${where} (no such file)`);
        } else if (anchor && target.endsWith('.md')) {
          if (!headingSlugs(fs.readFileSync(target, 'utf8')).has(decodeURIComponent(anchor).toLowerCase())) {
            broken.push(`${where} (no such heading in ${rel(target)})`);
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(docsPages.length);
    expect(broken).toEqual([]);
  });

  it('lists every API key scope in api.md', () => {
    const section = fs
      .readFileSync(path.join(DOCS, 'api.md'), 'utf8')
      .split('## API keys and scopes')[1]
      .split('\n## ')[0];
    expect(SCOPES.filter((scope) => !section.includes(`\`${scope}\``))).toEqual([]);
  });

  it('documents every setting the simulator reads, its state file included', () => {
    const read = new Set(fs.readFileSync(path.join(ROOT, 'simulator', 'main.ts'), 'utf8').match(/SIMULATOR_[A-Z_]+/g));
    const simulatorDoc = fs.readFileSync(path.join(DOCS, 'simulator.md'), 'utf8');
    expect([...read].filter((name) => !simulatorDoc.includes(`\`${name}\``))).toEqual([]);
    // npm start keeps the simulator's state on disk: the page must not say it is only in memory.
    expect(simulatorDoc).not.toMatch(/state in memory,/);
  });

  it('dates its reconciliation examples from the clock, so that they report something when copied', () => {
    const fixed = markdownFiles.flatMap((file) =>
      fs
        .readFileSync(file, 'utf8')
        .split('\n```')
        .filter((block) => block.includes('/v1/reconciliation-runs') && /\d{4}-\d{2}-\d{2}/.test(block))
        .map((block) => `${rel(file)}: ${block.slice(0, 80)}`),
    );
    expect(fixed).toEqual([]);
  });

  it('says how to set PAYOUT_APPROVAL_THRESHOLDS for npm start', () => {
    const finance = fs.readFileSync(path.join(DOCS, 'finance.md'), 'utf8');
    expect(finance).toMatch(/PAYOUT_APPROVAL_THRESHOLDS=\S+ npm start/);
    expect(finance).toMatch(/`\.env`/);
  });
});
