/**
 * The schema: a schema file ({@code syncular.ir.json} or the compact conformance form, SPEC §2.4) compiled into
 * tables, columns, scope patterns, declared references (§6.11) and the wire-level column descriptors the row codec
 * takes. Uses {@code wire} and the JDK only. A compiled schema is immutable and already validated: code downstream
 * never re-checks it.
 */
package syncular.jakarta.schema;
