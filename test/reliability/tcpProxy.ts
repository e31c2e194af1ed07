import net from 'node:net';

/**
 * A TCP proxy to cut a store off and bring it back inside a test: `cut('refuse')` drops every
 * connection and refuses new ones; `cut('blackhole')` drops them and then accepts connections
 * that never answer; `cut('freeze')` keeps open connections but stops passing bytes either way,
 * and holds new ones (a network partition: nothing is reset); `restore()` forwards again.
 */
export class TcpProxy {
  private server: net.Server;
  private sockets = new Set<net.Socket>();
  private mode: 'forward' | 'refuse' | 'blackhole' | 'freeze' = 'forward';
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {
    this.server = net.createServer((client) => this.accept(client));
  }

  async listen(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this.port;
  }

  private accept(client: net.Socket) {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => {});
    if (this.mode === 'refuse') return client.destroy();
    if (this.mode === 'blackhole' || this.mode === 'freeze') return; // held open, never forwarded
    const upstream = net.connect(this.target);
    this.sockets.add(upstream);
    upstream.on('close', () => {
      this.sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
  }

  cut(mode: 'refuse' | 'blackhole' | 'freeze' = 'refuse') {
    this.mode = mode;
    if (mode === 'freeze') {
      for (const s of this.sockets) {
        s.unpipe();
        s.pause();
      }
      return;
    }
    for (const s of this.sockets) s.destroy();
  }

  restore() {
    for (const s of this.sockets) s.destroy(); // blackholed connections are dead to the client
    this.mode = 'forward';
  }

  async close() {
    this.cut();
    await new Promise((r) => this.server.close(r));
  }
}
