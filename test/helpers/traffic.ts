/**
 * Several MCP clients calling remember (and recall) in a loop against a running server, recording every answer:
 * what a fault test checks the database against afterwards.
 */
export interface CallRecord {
  readonly tool: 'remember' | 'recall';
  /** For remember: the text sent (unique per call). */
  readonly text: string;
  /** remember's memory_id when it answered ok. */
  readonly memoryId: number | undefined;
  /** The tool error code, or 'HTTP <status>' / 'network' when there was no tool answer. */
  readonly error: string | undefined;
  readonly message: string | undefined;
  readonly startedAt: number;
  readonly endedAt: number;
}

export interface Traffic {
  readonly calls: readonly CallRecord[];
  /** Stops the clients and waits for their last calls. */
  stop(): Promise<readonly CallRecord[]>;
}

export interface TrafficOptions {
  readonly mcpUrl: string;
  /** One bearer token per client. */
  readonly tokens: readonly string[];
  /** Characters per remembered text, filled with distinct words (default: a short sentence). */
  readonly textChars?: number;
  /** Recall after every remember (default true). */
  readonly recall?: boolean;
  /** Milliseconds each client waits between calls (default 0). */
  readonly pauseMs?: number;
  readonly label?: string;
}

export function startTraffic(options: TrafficOptions): Traffic {
  const calls: CallRecord[] = [];
  let stopping = false;
  let id = 0;

  const call = async (token: string, tool: 'remember' | 'recall', args: Record<string, unknown>, text: string): Promise<void> => {
    const startedAt = Date.now();
    let record: Omit<CallRecord, 'startedAt' | 'endedAt'>;
    try {
      const response = await fetch(options.mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: tool, arguments: args } }),
        signal: AbortSignal.timeout(60_000),
      });
      const body = (await response.json().catch(() => undefined)) as
        | { result?: { isError?: boolean; structuredContent?: { memory_id?: number; error?: { code: string; message: string } } } }
        | undefined;
      const result = body?.result;
      if (response.status !== 200 || result === undefined) {
        record = { tool, text, memoryId: undefined, error: `HTTP ${response.status}`, message: JSON.stringify(body) };
      } else if (result.isError === true) {
        record = { tool, text, memoryId: undefined, error: result.structuredContent?.error?.code, message: result.structuredContent?.error?.message };
      } else {
        record = { tool, text, memoryId: result.structuredContent?.memory_id, error: undefined, message: undefined };
      }
    } catch (error) {
      record = { tool, text, memoryId: undefined, error: 'network', message: (error as Error).message };
    }
    calls.push({ ...record, startedAt, endedAt: Date.now() });
  };

  const client = async (token: string, index: number): Promise<void> => {
    for (let n = 0; !stopping; n++) {
      const base = `${options.label ?? 'fact'} ${index}-${n}: the user keeps note number ${n} of client ${index} in drawer ${(n * 7 + index) % 97}`;
      // Distinct words, so a long text has as many lexemes as a real one (its memory_terms are written in steps).
      const filler = () => Array.from({ length: Math.ceil(options.textChars! / 8) }, (_, k) => `word${k}`).join(' ');
      const text = options.textChars === undefined ? base : `${base} ${filler()}`.slice(0, options.textChars);
      // Every other memory in a conversation, so that the subject's count of those (subject_stats) is exercised too.
      await call(token, 'remember', { text, dedup_policy: 'insert', ...(n % 2 === 0 ? { session_id: `traffic-${index}` } : {}) }, text);
      if (options.recall !== false && !stopping) await call(token, 'recall', { query: `drawer ${n % 97}` }, '');
      if (options.pauseMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    }
  };

  const running = options.tokens.map((token, index) => client(token, index));
  return {
    calls,
    async stop() {
      stopping = true;
      await Promise.all(running);
      return calls;
    },
  };
}

/** Every remember that answered with a memory id: the acknowledged writes. */
export const acknowledged = (calls: readonly CallRecord[]): CallRecord[] => calls.filter((c) => c.tool === 'remember' && c.memoryId !== undefined);

/** Every remember refused with an error that says nothing was stored. */
export const refused = (calls: readonly CallRecord[]): CallRecord[] =>
  calls.filter((c) => c.tool === 'remember' && c.error !== undefined && !/unknown/.test(c.message ?? ''));
