/* remat/remat.h - umbrella header for libremat. */
#ifndef REMAT_REMAT_H
#define REMAT_REMAT_H

#include "remat/version.h"
#include "remat/error.h"
#include "remat/graph.h"
#include "remat/schedule.h"
#include "remat/io.h"
#include "remat/sim.h"
#include "remat/budget.h"
#include "remat/planner.h"
#include "remat/bound.h"
#include "remat/gen.h"
#include "remat/chain.h"
#include "remat/treedec.h"
#include "remat/order.h"

#endif
