// The "Audit trail" tab of the finance page: who (API client) did what to which resource, newest
// first, from GET /v1/audit-events (the key needs scope audit:read), with filters and cursor pages.
import { h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import htm from 'htm';
import { formatTime, shortId } from './format.js';

const html = htm.bind(h);
const EMPTY = { action: '', actorId: '', targetId: '' };

/** The tab: filters, the events table and a pager. `api` is the page's financeApi(key). */
export function AuditTrail({ api }) {
  const [form, setForm] = useState(EMPTY);
  const [filters, setFilters] = useState(EMPTY);
  const [cursors, setCursors] = useState([null]);
  const [page, setPage] = useState({ data: [], nextCursor: null, error: null, loading: true });
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    let live = true;
    setPage((p) => ({ ...p, loading: true }));
    api
      .auditEvents(filters, cursor ?? undefined, 25)
      .then((r) => live && setPage({ data: r.data, nextCursor: r.nextCursor, error: null, loading: false }))
      .catch((error) => live && setPage({ data: [], nextCursor: null, error, loading: false }));
    return () => {
      live = false;
    };
  }, [JSON.stringify([filters, cursor])]);

  const field = (name, label) => html`<label>
    ${label}
    <input value=${form[name]} onInput=${(e) => setForm({ ...form, [name]: e.currentTarget.value.trim() })} />
  </label>`;
  const submit = (event) => {
    event.preventDefault();
    setFilters({ ...form });
    setCursors([null]);
  };
  const denied = page.error?.status === 403;
  return html`<section class="audit" aria-busy=${page.loading ? 'true' : 'false'} data-testid="audit-section">
    <h2>Audit trail</h2>
    <form class="filters" onSubmit=${submit}>
      ${field('action', 'Action (e.g. payout.confirm)')} ${field('actorId', 'API client id')}
      ${field('targetId', 'Resource id')}
      <button type="submit">Apply</button>
    </form>
    ${denied && html`<p class="error" role="alert">This key lacks the audit:read scope.</p>`}
    ${page.error && !denied && html`<p class="error" role="alert">${page.error.message}</p>`}
    <table class="transactions" data-testid="audit-events">
      <thead>
        <tr><th>#</th><th>Time (UTC)</th><th>Client</th><th>Action</th><th>Resource</th><th>Outcome</th><th>Request</th></tr>
      </thead>
      <tbody>
        ${page.data.map(
          (e) => html`<tr key=${e.seq}>
            <td>${e.seq}</td>
            <td>${formatTime(e.at)}</td>
            <td title=${e.actorId ?? ''}>${e.actorName ?? '—'}</td>
            <td>${e.action}</td>
            <td title=${e.targetId ?? ''}>${e.targetType} ${e.targetId ? shortId(e.targetId) : ''}</td>
            <td class=${`status status-${e.outcome}`}>${e.outcome}</td>
            <td title=${e.requestId ?? ''}>${e.requestId ? shortId(e.requestId) : ''}</td>
          </tr>`,
        )}
      </tbody>
    </table>
    <nav class="pager" aria-label="Audit pages">
      <button type="button" class="secondary" disabled=${cursors.length === 1} onClick=${() => setCursors((c) => c.slice(0, -1))}>
        ← Previous
      </button>
      <span>Page ${cursors.length}</span>
      <button
        type="button"
        class="secondary"
        disabled=${!page.nextCursor}
        onClick=${() => setCursors((c) => [...c, page.nextCursor])}
      >
        Next →
      </button>
    </nav>
  </section>`;
}
