export declare function buildDashboard(): unknown;
export declare const dashboardFile: string;
export declare const renderDashboard: () => string;
