/** Implementation details of sdk-core. Not API: anything here may change in any release. */
package dev.idem.core.internal;
