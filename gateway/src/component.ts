/** The gateway's own process: its HTTP port (PORT) and admin port (ADMIN_PORT) by default. */
export const gatewayComponent = { name: "gateway", httpPort: 8080, adminPort: 9090 } as const;
