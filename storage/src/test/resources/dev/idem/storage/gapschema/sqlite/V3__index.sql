CREATE INDEX g_v ON g (v);
