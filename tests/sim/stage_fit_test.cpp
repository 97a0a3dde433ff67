// How a layout's verdict names the stages that do not run (sim/experiment/stage_fit.hpp).
#include <doctest/doctest.h>

#include "sim/experiment/stage_fit.hpp"

using namespace luwu;

TEST_CASE("a layout's verdict names the stage that decides and the others that do not run either") {
  sim::Fit runs, short_of_six{{}, "does not run: needs 6 buffers"}, short_of_nine{{}, "does not run: needs 9 buffers"};
  sim::StageFit fit;
  fit.stages = {runs, short_of_six, runs, short_of_nine};
  fit.worst = 1;
  CHECK(fit.problem() == "pipeline stage 1: does not run: needs 6 buffers (pipeline stage 3 does not run either)");
  fit.stages = {short_of_nine, short_of_six, runs, short_of_nine};
  CHECK(fit.problem() == "pipeline stage 1: does not run: needs 6 buffers (pipeline stages 0, 3 do not run either)");
  fit.stages = {runs, short_of_six};
  CHECK(fit.problem() == "pipeline stage 1: does not run: needs 6 buffers");
  fit.stages = {short_of_six};  // one stage: no stage named
  fit.worst = 0;
  CHECK(fit.problem() == "does not run: needs 6 buffers");
  fit.stages = {runs, runs};
  CHECK(fit.problem().empty());
}
