// The two modules of undici that the delivery sender loads (its index also loads fetch, WebSocket, the
// cache and the mocks: about 8 MB more RSS in each thread that sends; src/delivery/delivery-sender.ts).
declare module 'undici/lib/dispatcher/agent.js' {
  import { Agent } from 'undici';
  export = Agent;
}

declare module 'undici/lib/core/connect.js' {
  import { buildConnector } from 'undici';
  export = buildConnector;
}
