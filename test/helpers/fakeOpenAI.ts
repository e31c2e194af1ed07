import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type AiMode = 'ok' | 'error' | 'hang';

export interface FakeOpenAI {
  /** OPENAI_BASE_URL for the client. */
  baseUrl: string;
  mode: AiMode;
  reply: string;
  requests: { model: string; messages: { role: string; content: string }[] }[];
  close(): Promise<void>;
}

/** An OpenAI-compatible endpoint: POST /v1/chat/completions answers, fails (500) or never answers. */
export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const state: FakeOpenAI = {
    baseUrl: '',
    mode: 'ok',
    reply: 'The checkout handler called an undefined function.',
    requests: [],
    close: async () => {},
  };
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      state.requests.push(body);
      if (state.mode === 'hang') {
        hanging.add(res);
        return;
      }
      if (state.mode === 'error') {
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end('{"error":{"message":"upstream exploded","type":"server_error"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-test',
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: state.reply }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = () =>
    new Promise<void>((resolve) => {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
