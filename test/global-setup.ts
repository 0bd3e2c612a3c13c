import type { TestProject } from 'vitest/node';
import { startFakeOpenAI } from './fake-openai-server.ts';
import { startFakeProviders } from './fake-provider-server.ts';
import { startWebhookReceiver } from './webhook-receiver.ts';

/**
 * Runs in Node before the suite: starts the fake OpenAI-compatible server (the only fake we keep:
 * a real model needs the internet) and hands its URL to the tests through `inject('fakeOpenAI')`.
 */
export default async function setup(project: TestProject) {
  const server = await startFakeOpenAI();
  project.provide('fakeOpenAI', server.url);
  const providers = await startFakeProviders();
  project.provide('fakeProviders', providers.url);
  // Stands for the webhook receivers on the internet (test/api/webhooks.test.ts).
  const receiver = await startWebhookReceiver();
  project.provide('webhookReceiver', receiver.url);
  return async () => {
    await server.close();
    await providers.close();
    await receiver.close();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    fakeOpenAI: string;
    fakeProviders: string;
    webhookReceiver: string;
  }
}
