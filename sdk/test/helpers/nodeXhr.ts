import http from 'node:http';

/**
 * A stand-in for the browser's XMLHttpRequest over node:http: the part of it an app and the SDK
 * use (open, send, status, getResponseHeader, load/error/timeout/abort/loadend events), so the
 * XHR instrumentation is tested against real sockets.
 */
export class NodeXhr {
  status = 0;
  responseText = '';
  timeout = 0;
  private method = 'GET';
  private url = '';
  private headers: http.IncomingHttpHeaders = {};
  private listeners = new Map<string, ((e?: unknown) => void)[]>();
  private req: http.ClientRequest | undefined;

  open(method: string, url: string): void {
    this.method = method;
    this.url = url;
  }
  addEventListener(type: string, fn: (e?: unknown) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
  }
  getResponseHeader(name: string): string | null {
    const v = this.headers[name.toLowerCase()];
    return v === undefined ? null : String(v);
  }
  abort(): void {
    this.req?.destroy();
    this.end('abort');
  }
  send(body?: string | null): void {
    this.req = http.request(this.url, { method: this.method, timeout: this.timeout || undefined }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        this.status = res.statusCode ?? 0;
        this.headers = res.headers;
        this.responseText = Buffer.concat(chunks).toString('utf8');
        this.end('load');
      });
    });
    this.req.on('timeout', () => {
      this.req!.destroy();
      this.end('timeout');
    });
    this.req.on('error', () => this.end('error'));
    this.req.end(body ?? undefined);
  }
  private ended = false;
  private end(type: string): void {
    if (this.ended) return;
    this.ended = true;
    for (const t of [type, 'loadend']) for (const fn of this.listeners.get(t) ?? []) fn();
  }
}
