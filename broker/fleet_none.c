/* fleet_none.c - fleet mode when zkpipe was built without libpq (libpq-dev missing): the
 * hooks do nothing and joining a fleet is refused with the reason. Never silent at run time. */
#include <errno.h>

#include "broker/fleet.h"
#include "lib/util/util.h"

int brk_fleet_start(brk_t *b, const char *url_env, const char *box_name, const char *state_dir)
{
    (void)b; (void)url_env; (void)box_name; (void)state_dir;
    return zp_err_set(-ENOTSUP, "this zkpipe was built without PostgreSQL (libpq-dev was missing): fleet mode "
                                "is not available; install libpq-dev and rebuild");
}
void brk_fleet_stop(brk_t *b) { (void)b; }
int brk_fleet_pollitem(brk_t *b, zmq_pollitem_t *it) { (void)b; (void)it; return 0; }
void brk_fleet_service(brk_t *b) { (void)b; }
void brk_fleet_job_finished(brk_t *b, brk_job_t *j) { (void)b; (void)j; }
