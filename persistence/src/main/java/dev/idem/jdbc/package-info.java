/** The durable JDBC journal: H2 embedded by default, PostgreSQL for fleets. Work pending (issue 4). */
package dev.idem.jdbc;
