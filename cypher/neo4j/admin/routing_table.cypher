// mode: read
// The servers the routing driver would spread work over, for one database: when every
// role names the same single address the deployment is one server, and the store talks
// to it directly (bolt://) instead of keeping a routing table it never needs.
CALL dbms.routing.getRoutingTable({}, $database) YIELD servers
UNWIND servers AS server
UNWIND server.addresses AS address
RETURN server.role AS role, address
