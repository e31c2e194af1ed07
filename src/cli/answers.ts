// The management API's answers, as far as this CLI reads them (the routes are in README.md, "Management API and CLI").
export interface ValidationDetail {
  path?: string;
  message?: string;
  allowedValues?: unknown;
}
export interface ErrorAnswer {
  error?: string;
  details?: ValidationDetail[];
}
export interface ProjectAnswer {
  id: string;
  name: string;
  teamId: string | null;
  createdAt: string;
}
export interface ProjectCreatedAnswer {
  project: ProjectAnswer;
  apiKey: string;
}
export interface KeyCreatedAnswer {
  key: { id: string; prefix: string | null; name: string | null };
  apiKey: string;
}
export interface WebhookAnswer {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret?: string;
}
export interface DeliveryAnswer {
  createdAt: string;
  webhookId: string;
  event: string;
  status: string;
  attempts: number;
  responseCode: number | null;
  error: string | null;
}
export interface AlertRuleAnswer {
  id: string;
  name: string;
  kind: string;
  threshold: number | null;
  windowMinutes: number;
  enabled: boolean;
}
export interface ListAnswer<T> {
  items: T[];
}
export interface ArtifactAnswer {
  artifact: { size: number };
  replaced: boolean;
}
