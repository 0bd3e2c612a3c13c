/**
 * The one reader of `env`: turns bindings and variables (docs/configuration.md) into adapters.
 * Adapters that keep per-isolate state (the exact index) are built once per isolate.
 */
import type { AgentNamespace } from './adapters/agent-object-rpc.ts';
import { createActivity } from './adapters/log-activity.ts';
import { createD1AgentTransfer } from './adapters/d1-agent-transfer.ts';
import { createLog } from './adapters/log-turns.ts';
import { createD1Quality } from './adapters/d1-quality.ts';
import { createReviewLog } from './adapters/log-review-reads.ts';
import { createD1Revisions } from './adapters/d1-revisions.ts';
import { createD1Store } from './adapters/d1-store.ts';
import { createD1Pins } from './adapters/d1-pins.ts';
import { createD1Webhooks } from './adapters/d1-webhooks.ts';
import { createLegacyLog } from './adapters/d1-legacy-log.ts';
import { createLogRetention } from './adapters/log-retention.ts';
import { createDurableLog } from './adapters/log-db.ts';
import { createUsage } from './adapters/log-usage.ts';
import { createD1Upstreams } from './adapters/d1-upstreams.ts';
import { createSecretBox, type SecretBox, secretKeyWeakness } from './adapters/secret-box.ts';
import { createDurableOfferCounter } from './adapters/offer-counter.ts';
import { createDurableModelBudget, createDurableRateLimiter } from './adapters/rate-limiter.ts';
import { createExtractiveModel } from './adapters/extractive-model.ts';
import { createHashEmbedder } from './adapters/hash-embedder.ts';
import { createOpenAIEmbedder, createOpenAIModel } from './adapters/openai.ts';
import { createVectorizeIndex } from './adapters/vectorize-index.ts';
import { createWorkersAIEmbedder, createWorkersAIModel } from './adapters/workers-ai.ts';
import { adminTokenWeakness } from './core/admin-token.ts';
import type {
  ActivityStore,
  AgentTransferStore,
  CallLog,
  ChatModel,
  Embedder,
  LegacyLogStore,
  ModelBudget,
  OfferCounter,
  PinStore,
  QualityStore,
  RateLimiter,
  RateLimits,
  RetentionStore,
  ReviewLogReads,
  RevisionStore,
  ToolStore,
  UpstreamStore,
  UsageStore,
  VectorIndex,
  WebhookStore,
} from './core/ports.ts';
import { parsePerMinute } from './core/token-bucket.ts';
import { ApiError } from './errors.ts';

/** Bindings and variables of wrangler.toml / .dev.vars (docs/configuration.md). */
/**
 * The Worker's bindings: those wrangler.toml declares come from `worker-configuration.d.ts`
 * (`npm run types`; `npm run check` fails when it is out of date), the optional ones a deployment
 * may add (Vectorize, Workers AI, secrets) are written here.
 */
export interface Bindings extends Pick<WranglerEnv, 'DB' | 'AGENTS' | 'WEBHOOKS'> {
  VECTORIZE?: VectorizeIndex;
  AI?: Ai;
  EMBEDDER?: string;
  LLM?: string;
  OPENAI_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  /** Vector length for an `openai:<model>` embedder the adapter does not know (Ollama, vLLM, …). */
  EMBEDDER_DIMENSIONS?: string;
  /** Milliseconds one model HTTP attempt may take (default 30,000). */
  LLM_TIMEOUT_MS?: string;
  ADMIN_TOKEN?: string;
  /** 32 random bytes, base64: seals upstream header values (src/adapters/secret-box.ts). */
  UPSTREAM_SECRET_KEY?: string;
  /** Comma-separated browser origins, besides the deployment's own, that may use the MCP endpoint. */
  MCP_ALLOWED_ORIGINS?: string;
  /** Requests per minute per agent key; absent = 1,200, 0 = off. */
  RATE_LIMIT_PER_MINUTE?: string;
  /** Requests per minute of all the keys of one agent; absent = 6,000, 0 = off. */
  RATE_LIMIT_AGENT_PER_MINUTE?: string;
  /** Failed authentications per minute from one client address; absent = 20, 0 = off. */
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE?: string;
  /** MiB of routing snapshots one isolate keeps (default 48; docs/performance.md "Memory"). */
  ROUTING_CACHE_MB?: string;
  /**
   * `argument-values-only` narrows the privacy rule to argument values, for measuring what the
   * rule costs routing (docs/evaluation.md); anything else, or absent, is the whole rule.
   */
  PRIVACY_RULE?: string;
  /** `true`: webhooks may be plain http or loopback and private hosts (local development only; docs/configuration.md). */
  WEBHOOKS_ALLOW_LOCAL?: string;
  UPSTREAMS_ALLOW_LOCAL?: string;
}

export interface Services {
  store: ToolStore<D1PreparedStatement>;
  /** Turns, calls and outcomes of the log. */
  log: CallLog;
  /** Revisions, reviews and the cron cursor. */
  revisions: RevisionStore<D1PreparedStatement>;
  /** The bounded log reads of a review. */
  reviewLog: ReviewLogReads;
  /** Usage reads and trace_tools writes (docs/learning.md). */
  usage: UsageStore;
  /** Settled routing-quality hours (GET …/quality). */
  quality: QualityStore;
  /** Time-bucketed counts for the dashboard's charts. */
  activity: ActivityStore;
  /** Whole-agent export and import. */
  agentTransfer: AgentTransferStore;
  /** A log kept in D1 by an earlier version, moved into the agents' objects. */
  legacyLog: LegacyLogStore;
  /** Pinned tools (docs/tool-delivery.md). */
  pins: PinStore;
  /** What log retention reads and removes (docs/configuration.md `log_retention_days`). */
  retention: RetentionStore;
  embedder: Embedder;
  /** null: the exact in-process ranking of src/core/routing.ts is the index. */
  vectorIndex: VectorIndex | null;
  model: ChatModel;
  offers: OfferCounter;
  agents: AgentNamespace;
  /** The request limits of the RATE_LIMIT_* variables; null when all are off. */
  rateLimiter: RateLimiter | null;
  /** Each agent's model calls an hour (its `model_calls_per_hour` setting). */
  modelBudget: ModelBudget;
  /** Bytes of routing snapshots one isolate keeps (ROUTING_CACHE_MB). */
  routingCacheBytes: number;
  /** The MCP gateway's upstreams, their tools and sessions. */
  upstreams: UpstreamStore;
  /** Seals upstream header values; null when UPSTREAM_SECRET_KEY is not set. */
  secretBox: SecretBox | null;
  /** False only when PRIVACY_RULE narrows the rule to argument values (a measurement). */
  privacyRule: boolean;
  /** Each agent's webhooks and their deliveries (docs/integrations.md "Webhooks"). */
  webhooks: WebhookStore;
  /** The queue webhook events are sent through; the Worker's `queue` handler delivers them. */
  webhookQueue: Queue;
  /** WEBHOOKS_ALLOW_LOCAL: http, loopback and private receivers are accepted. */
  allowLocalWebhooks: boolean;
  /** UPSTREAMS_ALLOW_LOCAL: http, loopback and private MCP upstreams are accepted (src/core/upstream-url.ts). */
  allowLocalUpstreams: boolean;
}

const cache = new WeakMap<object, Services>();

/**
 * Builds (once per env object) the adapters the bindings select. Throws a 500-class error for a bad
 * setting — a weak ADMIN_TOKEN among them — so a misconfigured deployment refuses every request
 * with the reason rather than serving.
 */
export function services(env: Bindings): Services {
  const hit = cache.get(env);
  if (hit) return hit;
  const weakness = env.ADMIN_TOKEN === undefined ? null : adminTokenWeakness(env.ADMIN_TOKEN);
  if (weakness !== null) {
    throw misconfigured(
      `ADMIN_TOKEN is too weak: ${weakness}. Set a random one (\`openssl rand -base64 32\`; \`npm start\` generates one into .dev.vars)`,
    );
  }
  const keyWeakness = env.UPSTREAM_SECRET_KEY === undefined ? null : secretKeyWeakness(env.UPSTREAM_SECRET_KEY);
  if (keyWeakness !== null) {
    throw misconfigured(
      `UPSTREAM_SECRET_KEY cannot be used: ${keyWeakness}. Set 32 random bytes in base64 (\`openssl rand -base64 32\`)`,
    );
  }
  const logOf = createDurableLog(env.AGENTS);
  const built: Services = {
    store: createD1Store(env.DB),
    log: createLog(logOf),
    revisions: createD1Revisions(env.DB),
    reviewLog: createReviewLog(logOf),
    usage: createUsage(logOf),
    quality: createD1Quality(env.DB),
    activity: createActivity(logOf),
    agentTransfer: createD1AgentTransfer(env.DB, logOf),
    legacyLog: createLegacyLog(env.DB, logOf),
    pins: createD1Pins(env.DB),
    retention: createLogRetention(env.DB, logOf),
    embedder: pickEmbedder(env),
    vectorIndex: env.VECTORIZE ? createVectorizeIndex(env.VECTORIZE) : null,
    model: pickModel(env),
    offers: createDurableOfferCounter(env.AGENTS),
    agents: env.AGENTS,
    rateLimiter: createDurableRateLimiter(env.AGENTS, rateLimits(env)),
    modelBudget: createDurableModelBudget(env.AGENTS),
    routingCacheBytes: cacheBytes(env.ROUTING_CACHE_MB),
    privacyRule: env.PRIVACY_RULE !== 'argument-values-only',
    upstreams: createD1Upstreams(env.DB),
    secretBox: env.UPSTREAM_SECRET_KEY ? createSecretBox(env.UPSTREAM_SECRET_KEY) : null,
    webhooks: createD1Webhooks(env.DB),
    webhookQueue: env.WEBHOOKS,
    allowLocalWebhooks: env.WEBHOOKS_ALLOW_LOCAL === 'true',
    allowLocalUpstreams: env.UPSTREAMS_ALLOW_LOCAL === 'true',
  };
  cache.set(env, built);
  return built;
}

/**
 * The request limits a deployment has when it sets none: on, high enough for an agent's real
 * traffic (20 requests a second per key, 100 per agent, sustained) and low enough that one
 * misbehaving client cannot take the agent's Durable Object for itself.
 */
export const DEFAULT_RATE_LIMITS: RateLimits = { perKey: 1200, perAgent: 6000, authFailures: 20 };

function rateLimits(env: Bindings): RateLimits {
  const read = (name: keyof Bindings & `RATE_LIMIT_${string}`, fallback: number): number => {
    const raw = env[name];
    const n = parsePerMinute(raw, fallback);
    if (n === null) throw misconfigured(`${name} "${raw}" is not a whole number of requests a minute (0 = off)`);
    return n;
  };
  return {
    perKey: read('RATE_LIMIT_PER_MINUTE', DEFAULT_RATE_LIMITS.perKey),
    perAgent: read('RATE_LIMIT_AGENT_PER_MINUTE', DEFAULT_RATE_LIMITS.perAgent),
    authFailures: read('RATE_LIMIT_AUTH_FAILURES_PER_MINUTE', DEFAULT_RATE_LIMITS.authFailures),
  };
}

/** The model, key and base URL of an OpenAI-compatible provider (OPENAI_API_KEY, OPENAI_BASE_URL). */
function openAIOf(env: Bindings, model: string) {
  return {
    model,
    apiKey: env.OPENAI_API_KEY ?? '',
    ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : {}),
  };
}

function pickEmbedder(env: Bindings): Embedder {
  const spec = env.EMBEDDER ?? 'hash';
  if (spec === 'hash') return createHashEmbedder();
  const [provider, model] = splitSpec(spec, 'EMBEDDER');
  if (provider === 'workers-ai') return createWorkersAIEmbedder(requireAi(env, 'EMBEDDER'), model);
  if (provider === 'openai') {
    const dims = env.EMBEDDER_DIMENSIONS ? Number(env.EMBEDDER_DIMENSIONS) : undefined;
    return createOpenAIEmbedder({ ...openAIOf(env, model), ...(dims ? { dimensions: dims } : {}) });
  }
  throw misconfigured(`EMBEDDER "${spec}" is not one of hash, workers-ai:<model>, openai:<model>`);
}

function pickModel(env: Bindings): ChatModel {
  const spec = env.LLM ?? 'extractive';
  if (spec === 'extractive') return createExtractiveModel();
  const [provider, model] = splitSpec(spec, 'LLM');
  if (provider === 'workers-ai') return createWorkersAIModel(requireAi(env, 'LLM'), model);
  if (provider === 'openai') {
    const timeoutMs = env.LLM_TIMEOUT_MS ? Number(env.LLM_TIMEOUT_MS) : undefined;
    return createOpenAIModel({ ...openAIOf(env, model), ...(timeoutMs ? { timeoutMs } : {}) });
  }
  throw misconfigured(`LLM "${spec}" is not one of extractive, openai:<model>, workers-ai:<model>`);
}

function splitSpec(spec: string, name: string): [string, string] {
  const i = spec.indexOf(':');
  if (i <= 0 || i === spec.length - 1) throw misconfigured(`${name} "${spec}" must look like provider:model`);
  return [spec.slice(0, i), spec.slice(i + 1)];
}

function requireAi(env: Bindings, name: string): Ai {
  if (!env.AI) throw misconfigured(`${name} uses workers-ai but the AI binding is absent`);
  return env.AI;
}

function misconfigured(message: string): ApiError {
  return new ApiError('internal', `configuration: ${message}`);
}

/**
 * The bytes of routing snapshots an isolate keeps by default: an isolate has 128 MB, and 48 MiB
 * leaves room for the requests in flight and one snapshot being built.
 */
export const DEFAULT_ROUTING_CACHE_BYTES = 48 * 1024 * 1024;

/** ROUTING_CACHE_MB as bytes: a positive number of MiB, else the default. */
function cacheBytes(value: string | undefined): number {
  const mib = Number(value);
  return value !== undefined && Number.isFinite(mib) && mib > 0 ? mib * 1024 * 1024 : DEFAULT_ROUTING_CACHE_BYTES;
}
