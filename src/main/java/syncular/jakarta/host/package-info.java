/**
 * The SPI a deployer implements or configures (SPEC §1.1 host auth, §3.2 scope resolution, §6.7/§6.8 validators):
 * CDI beans in a deployer's jar replace the built-in ones. Uses {@code wire} and {@code schema} only; nothing here
 * may reach the database on its own.
 */
package syncular.jakarta.host;
