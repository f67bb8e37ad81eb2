package syncular.jakarta.it;

import jakarta.ejb.EJB;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Response;

/** Test-only resource: the HTTP entry of {@link ItProbeService}. */
@Path("it-probe")
public class ItProbeResource {
    @EJB
    ItProbeService service;

    @POST
    @Path("notes")
    public Response insert(@QueryParam("note") String note) throws Exception {
        return Response.ok(service.insert(note)).build();
    }

    @POST
    @Path("notes-then-fail")
    public Response insertThenFail(@QueryParam("note") String note) {
        try {
            service.insertThenFail(note);
            return Response.ok().build();
        } catch (Exception e) {
            return Response.status(500).entity("rolled back").build();
        }
    }
}
