/** Implementation details of the persistence module. Not API: anything here may change in any release. */
package dev.idem.jdbc.internal;
