/** Checks that a response has the shape its API family promises (docs/api/http.md). */
import { expect } from 'chai';

export function expectFamilyShape(path: string, headers: Record<string, string>, r: { status: number; text: string; json: any; headers: Headers }) {
  const where = `${r.status} ${path}: ${r.text.slice(0, 300)}`;
  expect(r.status, where).to.be.below(500);
  expect(r.headers.get('x-request-id'), where).to.be.a('string');
  const type = r.headers.get('content-type') ?? '';
  if (r.status === 401 && type.startsWith('text/plain')) {
    expect(r.text, where).to.equal('Authentication required');
    return;
  }
  // The system routes' pages and text (API reference page and its assets, its icon, Prometheus
  // metrics) are not JSON; what a 2xx may carry is the OpenAPI document's business (checked by call()).
  const page = path.split('?')[0];
  if (r.status < 400 && (page === '/docs' || page!.startsWith('/docs/') || page === '/metrics' || page === '/favicon.ico')) return;
  expect(type, where).to.contain('application/json');
  const body = r.json;
  if (path.startsWith('/v3/connect')) {
    if (r.status === 401 && !('success' in body)) return expect(Object.keys(body).sort(), where).to.deep.equal(['code', 'message']);
    if (r.status >= 400) {
      expect(body.success, where).to.equal(false);
      expect(body.error.code, where).to.be.a('string');
      expect(body.error.message, where).to.be.a('string');
      expect(body.meta, where).to.have.all.keys('requestId', 'timestamp', 'workspaceId');
    }
  } else if (path.startsWith('/api/v3/unify')) {
    if (r.status === 401) return expect(body, where).to.deep.equal({ error: 'Unauthorized' });
    const newFormat = (headers['new-api'] ?? '').toLowerCase() === 'true' || path.startsWith('/api/v3/unify/');
    if (r.status >= 400 && newFormat && r.status !== 422) expect(body.code ?? body.error, where).to.be.a('string');
    if (r.status >= 400 && !newFormat) {
      expect(body.status, where).to.equal('error');
      expect(body.data, where).to.equal(null);
      expect(body.errors, where).to.be.an('array');
      for (const e of body.errors) expect(e.path, where).to.be.an('array');
    }
  } else if (path.startsWith('/api/v3/documents')) {
    if (r.status === 401) return expect(Object.keys(body).sort(), where).to.deep.equal(['code', 'message']);
    if (r.status >= 400 && r.status !== 422) {
      expect(body.success, where).to.equal(false);
      expect(body.code, where).to.be.a('string');
    }
  } else if (path.startsWith('/invoices/query')) {
    if (r.status === 401) return expect(body.code, where).to.be.a('string');
    if (r.status >= 400) {
      expect(body.success, where).to.equal(false);
      expect(body.code, where).to.be.a('string');
    }
  } else if (r.status >= 400) {
    expect(body.code, where).to.be.a('string');
  }
}
