/**
 * SQLite bootstrap images (SPEC §5.3): the segment format whose bytes are a whole SQLite database file, written with
 * the SQLite JDBC driver. A format beside {@code wire}'s SSG2 rows segments; it knows columns and values, never
 * storage or the protocol's lane rules (those are {@code sync.SqliteImageLane}'s).
 */
package syncular.jakarta.image;
