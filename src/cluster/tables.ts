// Leases shared by the Anvil processes of one site (migration 0040).
export interface ClusterLeaseTable {
  name: string;
  /** The holding acquisition (`<node>/<random>`), '' when never held. */
  holder: string;
  /** Milliseconds since the epoch until which the holder owns it; 0 when released. */
  expires_ms: number;
  /** When it was last taken (a periodic task's last start). */
  started_ms: number;
}

export interface ClusterTables {
  cluster_lease: ClusterLeaseTable;
}
