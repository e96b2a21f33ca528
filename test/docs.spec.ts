/**
 * The README is the front door and `docs/` holds the rest: this keeps the README short, every docs
 * page reachable from it, and every relative link (and `#anchor`) in them pointing somewhere real.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SCOPES } from '../src/auth/scopes';
import { CARD_MOVES } from '../src/cards/card-state';
import { TRANSITIONS } from '../src/transactions/transaction-state';

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

  it('lists every API key scope in docs/api.md', () => {
    const section = fs
      .readFileSync(path.join(ROOT, 'docs/api.md'), 'utf8')
      .split('## API keys and scopes')[1]
      .split('\n## ')[0];
    expect(SCOPES.filter((scope) => !section.includes(`\`${scope}\``))).toEqual([]);
  });

  it('documents every setting the simulator reads, its state file included', () => {
    const read = new Set(fs.readFileSync(path.join(ROOT, 'simulator', 'main.ts'), 'utf8').match(/SIMULATOR_[A-Z_]+/g));
    const simulatorDoc = fs.readFileSync(path.join(ROOT, 'docs/simulator.md'), 'utf8');
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
    const finance = fs.readFileSync(path.join(ROOT, 'docs/finance.md'), 'utf8');
    expect(finance).toMatch(/PAYOUT_APPROVAL_THRESHOLDS=\S+ npm start/);
    expect(finance).toMatch(/`\.env`/);
  });
});

/**
 * Every document the code and docs cite is in the repository. Comments in src/, simulator/,
 * scripts/, test/, bench/, prisma/ and the docs cite documents by path (`docs/provider.md#payouts`
 * in code, relative links in docs/); this scans every text file of the repository for `*.md`
 * citations and fails on one whose file does not exist here (resolved from the citing file's folder,
 * then from the repository root), on an `#anchor` (and a following `, #anchor`) its file has no
 * heading for, and on any citation of the outside documents the project began from or of their folder.
 */
/** Folders never scanned: dependencies, build and test output, generated code, local data. */
const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist', 'coverage', '.data', '.bench']);
/** Paths (from the root) never scanned: generated from files that are scanned, or not ours. */
const SKIPPED_PATHS = new Set(['src/generated', 'clients/typescript/dist', 'package-lock.json']);
/** Documents that lived outside the repository; spelled in pieces so that this file does not cite them. */
const OUTSIDE_DOCUMENTS = ['DESIGN', 'STYLE', 'provider-api', 'provider-webhooks', 'PRISMA-OFFLINE'].map(
  (name) => `${name}.md`,
);
const OUTSIDE_NAME = new RegExp(`(?<![\\w-])(${OUTSIDE_DOCUMENTS.map((n) => n.replace(/[.-]/g, '\\$&')).join('|')})`);
/** The folder beside the repository that held them, however reached. */
const OUTSIDE_FOLDER = /(?:\.\.\/|\/work\/)shared\b/;
/** A path ending in `.md`, its `#anchor`, and further anchors (`, #other` or ` and #other`). */
const CITATION = /([\w./-]*[\w-]\.md)(?![\w-])(?:#([\w-]+))?((?:,? (?:and )?#[\w-]+)*)/g;
const URL = /\b[a-z][a-z0-9+.-]*:\/\/\S+/gi;

interface Citation {
  file: string;
  line: number;
  target: string;
  anchors: string[];
}

/** Every text file of the repository, minus SKIPPED_DIRS and SKIPPED_PATHS. */
function repositoryFiles(dir = ROOT): string[] {
  const files: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (SKIPPED_PATHS.has(rel(full)) || (entry.isDirectory() && SKIPPED_DIRS.has(entry.name))) continue;
    if (entry.isDirectory()) files.push(...repositoryFiles(full));
    else if (entry.isFile()) files.push(full);
  }
  return files;
}

/** The text of `file`, or null for a binary (a NUL byte) or a file over 2 MB. */
function textOf(file: string): string | null {
  if (fs.statSync(file).size > 2 * 1024 * 1024) return null;
  const bytes = fs.readFileSync(file);
  return bytes.includes(0) ? null : bytes.toString('utf8');
}

/** The `*.md` citations of `text` (URLs left out), with their anchors. */
export function citationsIn(file: string, text: string): Citation[] {
  const found: Citation[] = [];
  text.split('\n').forEach((line, i) => {
    for (const m of line.replace(URL, '').matchAll(CITATION)) {
      const more = [...(m[3] ?? '').matchAll(/#([\w-]+)/g)].map((a) => a[1]);
      found.push({ file, line: i + 1, target: m[1], anchors: m[2] ? [m[2], ...more] : [] });
    }
  });
  return found;
}

/** What is wrong with one citation, or null: outside the repository, missing, or an unknown anchor. */
function problemOf(citation: Citation): string | null {
  const candidates = [path.dirname(citation.file), ROOT].map((base) => path.resolve(base, citation.target));
  const target = candidates.find((c) => c.startsWith(ROOT + path.sep) && fs.existsSync(c));
  if (!target) return 'no such file in the repository';
  const slugs = headingSlugs(fs.readFileSync(target, 'utf8'));
  const unknown = citation.anchors.filter((a) => !slugs.has(a.toLowerCase()));
  return unknown.length ? `no heading for #${unknown.join(', #')} in ${rel(target)}` : null;
}

describe('documents cited in code and docs', () => {
  const scanned = repositoryFiles()
    .map((file) => ({ file, text: textOf(file) }))
    .filter((f): f is { file: string; text: string } => f.text !== null);

  it('reads citations with their anchors, and leaves URLs alone', () => {
    const here = path.join(ROOT, 'src', 'x.ts');
    const cites = citationsIn(
      here,
      '// docs/provider.md#beneficiaries, #payouts and #cards; see https://example.com/CHANGELOG.md\n// README.md',
    );
    expect(cites).toEqual([
      { file: here, line: 1, target: 'docs/provider.md', anchors: ['beneficiaries', 'payouts', 'cards'] },
      { file: here, line: 2, target: 'README.md', anchors: [] },
    ]);
    expect(cites.map(problemOf)).toEqual([null, null]);
    const missing = 'docs/no-such-page' + '.md';
    expect(problemOf(citationsIn(here, `// ${missing}`)[0])).toBe('no such file in the repository');
    expect(problemOf(citationsIn(here, `// docs/provider.md${'#'}no-such-heading`)[0])).toMatch(/no heading/);
    const outside = `../../${'shared'}/${OUTSIDE_DOCUMENTS[0]}`;
    expect(problemOf(citationsIn(here, `// ${outside}`)[0])).toBe('no such file in the repository');
    expect(OUTSIDE_NAME.test(outside) && OUTSIDE_FOLDER.test(outside)).toBe(true);
    expect(OUTSIDE_NAME.test('docs/design.md')).toBe(false);
  });

  it('scans the code, the tests, the simulator, the schema and the docs', () => {
    const folders = new Set(scanned.map(({ file }) => rel(file).split(path.sep)[0]));
    for (const folder of ['src', 'simulator', 'scripts', 'test', 'bench', 'prisma', 'docs', 'README.md']) {
      expect(folders).toContain(folder);
    }
  });

  it('cites only documents that are in the repository, at headings they have', () => {
    const citations = scanned.flatMap(({ file, text }) => citationsIn(file, text));
    expect(citations.filter((c) => rel(c.file).startsWith(`src${path.sep}`)).length).toBeGreaterThan(50);
    const broken = citations.flatMap((c) => {
      const problem = problemOf(c);
      return problem ? [`${rel(c.file)}:${c.line} → ${c.target} (${problem})`] : [];
    });
    expect(broken).toEqual([]);
  });

  it('never cites the outside documents or their folder', () => {
    const outside: string[] = [];
    for (const { file, text } of scanned) {
      text.split('\n').forEach((line, i) => {
        const hit = OUTSIDE_NAME.exec(line)?.[1] ?? OUTSIDE_FOLDER.exec(line)?.[0];
        if (hit) outside.push(`${rel(file)}:${i + 1} → ${hit}`);
      });
    }
    expect(outside).toEqual([]);
  });
});

/** The table rows (cells, backticks removed from codes) under `heading` of a markdown page, header and rule left out. */
function tableUnder(markdown: string, heading: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(heading);
  const end = lines.findIndex((line, i) => i > start && /^#{1,6} /.test(line));
  return lines
    .slice(start + 1, end === -1 ? undefined : end)
    .filter((line) => line.startsWith('|') && !/^\|[-| ]+\|$/.test(line))
    .slice(1)
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

/** The codes of a cell, a note in parentheses left out: `a`, `b` (source `c` only) → [a, b]; plain text split on commas. */
function codes(cell: string): string[] {
  const text = cell.replace(/\s*\(.*\)\s*$/, '');
  return text.includes('`') ? [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]) : text.split(',').map((c) => c.trim());
}

describe('docs/design.md', () => {
  const design = fs.readFileSync(path.join(ROOT, 'docs/design.md'), 'utf8');

  it('gives the ledger state machine as src/transactions/transaction-state.ts has it', () => {
    const described: Record<string, Record<string, string[]>> = {};
    for (const [kinds, froms, tos] of tableUnder(design, '### Ledger transactions')) {
      for (const kind of codes(kinds))
        for (const from of codes(froms)) (described[kind] ??= {})[from] = [...codes(tos)].sort();
    }
    const coded = Object.fromEntries(
      Object.entries(TRANSITIONS).map(([kind, moves]) => [
        kind,
        Object.fromEntries(Object.entries(moves).map(([from, to]) => [from, [...(to ?? [])].sort()])),
      ]),
    );
    expect(described).toEqual(coded);
  });

  it('gives the card state machine as src/cards/card-state.ts has it', () => {
    const described = Object.fromEntries(
      tableUnder(design, '### Cards').map(([move, froms, to]) => [
        codes(move)[0],
        { from: codes(froms).sort(), to: codes(to)[0] },
      ]),
    );
    const coded = Object.fromEntries(
      Object.entries(CARD_MOVES).map(([move, rule]) => [move, { from: [...rule.from].sort(), to: rule.to }]),
    );
    expect(described).toEqual(coded);
  });
});
