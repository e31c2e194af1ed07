/** What an app sends to start a session (POST /ingest/session), as validated by its schema. */

export interface Device {
  platform?: string;
  osVersion?: string;
  model?: string;
  brand?: string;
  appVersion?: string;
  appBuildNumber?: string;
  sdkVersion?: string;
  locale?: string;
  timezone?: string;
  screenWidth?: number;
  screenHeight?: number;
  networkType?: string;
}

export interface SessionStart {
  sessionId: string;
  device: Device;
  startedAt: number;
  userId?: string;
  /** production, staging… (docs/decisions.md, "Crash context"); checked by validEnvironment */
  environment?: unknown;
}
