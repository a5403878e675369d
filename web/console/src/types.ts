export interface Network {
  mode: string;
  allow?: string[];
  allow_cidr?: string[];
}

export interface Spec {
  template?: string;
  cpu?: number;
  memory_mb?: number;
  disk_mb?: number;
  pids?: number;
  timeout_s?: number;
  labels?: Record<string, string>;
  network?: Network;
  browser?: boolean;
}

export interface Sandbox {
  id: string;
  tenant: string;
  state: string;
  spec: Spec;
  created_at: string;
  expires_at: string;
  reason?: string;
  from_pool?: boolean;
}

export interface Perf {
  snapshot?: { count: number; receivedAt: number; dom: number; paint: number };
  updates: { count: number; dom: number; paint: number }[];
  echo: number[];
}

declare global {
  interface Window {
    __paddockPerf: Perf;
  }
}

window.__paddockPerf = window.__paddockPerf || { updates: [], echo: [] };
export const perf = window.__paddockPerf;
